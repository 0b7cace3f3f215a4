"""micro-rag-mcp, packed as the wheel micro-rag-mcp-go: the Go binary and
its libraries under this folder (bin/, lib/), started by main()."""
import os
import sys

__all__ = ["main"]


def main():
    """Replaces this Python process with the binary: stdin, stdout and
    signals then belong to the server alone, and its exit status is ours."""
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "micro-rag-mcp")
    try:
        os.execv(exe, [exe] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("micro-rag-mcp: cannot run %s: %s\n" % (exe, e))
        sys.exit(127)
