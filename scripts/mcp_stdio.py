"""A minimal MCP client over a server's stdio, for the measurement scripts."""
import json, subprocess, sys, time


class Session:
    """Starts the server with args, initializes, and calls methods; every
    notification that arrives is handed to on_note(message). The server's
    stderr goes to stderr (a file, say; default discarded), its environment
    is env (default inherited)."""

    def __init__(self, args, on_note=None, stderr=subprocess.DEVNULL, env=None):
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=stderr, env=env, text=True)
        self.on_note = on_note or (lambda m: None)
        self.next_id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "measure", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def call(self, method, params):
        self.next_id += 1
        i = self.next_id
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        for line in self.p.stdout:
            m = json.loads(line)
            if "method" in m and "id" not in m:
                self.on_note(m)
            if m.get("id") == i:
                return m
        sys.exit("server stopped")

    def settle(self):
        """Returns once the start-up indexing is over (reindex answers, not busy)."""
        while "busy" in json.dumps(self.call("tools/call", {"name": "reindex", "arguments": {}})):
            time.sleep(0.5)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)
