"""What tests and debugging sessions ask of dlspan's Python layer."""

def live_borrows() -> int:
    """View arguments alive right now (borrows registered): 0 between calls."""
