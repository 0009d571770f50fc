"""The table both Python benchmarks print (exchange.py, torch_native.py): each row's ns per call,
beside its peer's from the same run, with the ratio and the target it is held to."""


def print_table(rows, median, markdown, width):
    """Prints ``rows`` (``(name, peer name or None, target ratio or None)``) from ``median`` (ns per
    call by name), as Markdown or as aligned text whose first column is ``width`` wide, then how
    many targets were met."""
    if markdown:
        print("| operation | ns/call | peer | peer ns/call | ratio | target | met |")
        print("|---|---:|---|---:|---:|---:|---|")
    failed = 0
    for name, peer, target in rows:
        ns = median[name]
        if peer is None:
            line = (name, f"{ns:.0f}", "", "", "", "", "")
        else:
            ratio = ns / median[peer]
            met = target is None or ratio <= target
            failed += not met
            line = (name, f"{ns:.0f}", peer, f"{median[peer]:.0f}", f"{ratio:.2f}",
                    "" if target is None else f"≤ {target}", "yes" if met else "no")
        if markdown:
            print("| " + " | ".join(line) + " |")
        else:
            print(f"{line[0]:{width}s} {line[1]:>9s} ns  {line[4]:>5s}x {line[5]:>7s} {line[6]}")
    return failed


def print_targets(rows, failed):
    """The summary line: how many of the rows' targets were met."""
    targets = sum(target is not None for *_, target in rows)
    print(f"# {targets - failed} of {targets} targets met")
