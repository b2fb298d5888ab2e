"""Command-line handling shared by the boot/clients/ tools."""
import sys


def check_args(argv, doc, counts):
    """None when argv holds one of COUNTS arguments (the program's name
    counted); else the exit status, having printed the usage (--help: its
    whole DOC, status 0) or why not (status 2)"""
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        print(doc.strip())
        return 0
    for arg in argv[1:]:
        if arg.startswith("-"):
            print(f"{argv[0]}: unknown argument '{arg}' (see --help)", file=sys.stderr)
            return 2
    if len(argv) not in counts:
        print(doc.strip().splitlines()[0], file=sys.stderr)
        return 2
    return None
