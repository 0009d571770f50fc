"""What tests and debugging sessions ask of dlspan's Python layer."""

def live_borrows() -> int:
    """View arguments alive right now (borrows registered): 0 between calls."""

def caller_stream(x: object) -> tuple[tuple[int, int], int, int, str]:
    """The stream a CUDA tensor argument's work goes on (rule Y21): ``((device_type, device_id),
    handle, dlpack_stream, source)``, source ``"ExchangeTable"``, ``"CuPy"`` or ``"Dlspan"``.
    TypeError for memory that is not CUDA device memory."""
