#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""fake_openai.py - a scripted OpenAI Responses API on 127.0.0.1, for tests
that run the real Codex CLI against it (tests/agent/codex_real.sh).

    fake_openai.py SCRIPT.json LOG.jsonl PORTFILE

SCRIPT.json: a list of turns, each a list of output items the "model"
answers with, in order, to the agent's main requests (those that offer
tools): {"type": "text", "text": ...} or {"type": "call", "name": TOOL,
"arguments": {...}} (a function_call; "name" may be a regular expression
matched against the tool names the request offers, e.g. "txfs.*exec", so
that the test need not know how the client names an MCP server's tools).
Past the script's end it answers "Done.". Requests without tools get a
short text. Answers are server-sent events as the real API streams them:
response.created, response.output_item.added/done, response.completed.

LOG.jsonl gets one line per request: path, the tools offered, the turn
answered, the function_call_output items of the input since the last
model turn (call_id, output) and the calls sent back. PORTFILE gets the
port once listening. Binds 127.0.0.1 only; stops by itself after 600 s.
"""
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]
LOCK = threading.Lock()
STATE = {"turn": 0, "n": 0}


def log(entry):
    with LOCK, open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


def tool_name(t):
    return t.get("name") or (t.get("function") or {}).get("name") or \
        t.get("type")


def output_text(o):
    if isinstance(o, str):
        return o
    if isinstance(o, dict):
        return o.get("content") if isinstance(o.get("content"), str) \
            else json.dumps(o)
    if isinstance(o, list):
        return "".join(x.get("text", "") for x in o if isinstance(x, dict))
    return json.dumps(o)


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply_json(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        if self.path.split("?")[0].endswith("/models"):
            return self.reply_json(200, {"object": "list", "data": [],
                                         "models": []})
        self.reply_json(404, {"error": {"message": "not here"}})

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n)
        if self.headers.get("content-encoding") == "zstd":
            log({"method": "POST", "path": self.path, "error": "zstd body"})
            return self.reply_json(400, {"error": {"message": "zstd"}})
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?")[0]
        if not path.endswith("/responses"):
            log({"method": "POST", "path": path})
            return self.reply_json(404, {"error": {"message": "not here"}})
        tools = [tool_name(t) for t in req.get("tools") or []]
        main = bool(tools)
        items = req.get("input") or []
        k = len(items)
        while k > 0 and not (isinstance(items[k - 1], dict) and (
                items[k - 1].get("type") == "function_call" or
                items[k - 1].get("role") == "assistant")):
            k -= 1
        outputs = [{"call_id": i.get("call_id"),
                    "output": output_text(i.get("output"))}
                   for i in items[k:] if isinstance(i, dict) and
                   i.get("type") == "function_call_output"]
        with LOCK:
            STATE["n"] += 1
            turn = None
            if main:
                turn = STATE["turn"]
                STATE["turn"] += 1
        out = []
        if main and turn < len(SCRIPT):
            for i, b in enumerate(SCRIPT[turn]):
                if b["type"] == "text":
                    out.append({"type": "message", "role": "assistant",
                                "id": "msg_%d_%d" % (turn, i),
                                "content": [{"type": "output_text",
                                             "text": b["text"],
                                             "annotations": []}]})
                    continue
                names = [t for t in tools if t and
                         re.fullmatch(b["name"], t)]
                fc = {"type": "function_call",
                      "id": "fc_%d_%d" % (turn, i),
                      "call_id": "call_%d_%d" % (turn, i),
                      "name": names[0] if names else b["name"],
                      "arguments": json.dumps(b["arguments"])}
                if b.get("namespace"):
                    fc["namespace"] = b["namespace"]
                out.append(fc)
        else:
            out.append({"type": "message", "role": "assistant",
                        "id": "msg_end_%d" % STATE["n"],
                        "content": [{"type": "output_text",
                                     "text": "Done." if main else "ok",
                                     "annotations": []}]})
        log({"method": "POST", "path": path, "main": main, "turn": turn,
             "tools": tools, "outputs": outputs,
             "calls": [{"call_id": o["call_id"], "name": o["name"],
                        "arguments": o["arguments"]}
                       for o in out if o["type"] == "function_call"],
             "text": [o["content"][0]["text"] for o in out
                      if o["type"] == "message"]})
        rid = "resp_%d" % STATE["n"]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()

        def ev(data):
            self.wfile.write(("event: %s\ndata: %s\n\n"
                              % (data["type"], json.dumps(data))).encode())
            self.wfile.flush()

        resp = {"id": rid, "object": "response", "status": "in_progress",
                "model": req.get("model"), "output": []}
        ev({"type": "response.created", "response": resp})
        for i, o in enumerate(out):
            ev({"type": "response.output_item.added", "output_index": i,
                "item": o})
            if o["type"] == "message":
                ev({"type": "response.output_text.delta", "output_index": i,
                    "item_id": o["id"], "content_index": 0,
                    "delta": o["content"][0]["text"]})
            ev({"type": "response.output_item.done", "output_index": i,
                "item": o})
        ev({"type": "response.completed", "response": dict(
            resp, status="completed", output=out,
            usage={"input_tokens": 100, "input_tokens_details":
                   {"cached_tokens": 0}, "output_tokens": 20,
                   "output_tokens_details": {"reasoning_tokens": 0},
                   "total_tokens": 120})})
        self.close_connection = True


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    with open(sys.argv[3] + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(sys.argv[3] + ".tmp", sys.argv[3])
    threading.Timer(600, srv.shutdown).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
