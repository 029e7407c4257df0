#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""fake_anthropic.py - a scripted Anthropic Messages API on 127.0.0.1, for
tests that run the real Claude Code against it (tests/agent/claude_real.sh).

    fake_anthropic.py SCRIPT.json LOG.jsonl PORTFILE

SCRIPT.json: a list of turns, each a list of content blocks the "model"
answers with, in order, to the agent's main requests (those that offer the
Bash tool): {"type": "text", "text": ...} or {"type": "tool_use", "name":
"Bash", "input": {...}} (ids are made up: toolu_fake_N). Past the script's
end it answers "Done." and stops. Other requests (titles, summaries, quota
probes: no tools) get a short text. Streaming requests ("stream": true) are
answered with server-sent events as the real API sends them: message_start,
content_block_start/delta/stop (text_delta, input_json_delta),
message_delta (stop_reason), message_stop.

LOG.jsonl gets one line per request: path, model, whether main, the turn
answered, what came back since the model's last turn (the tool_result
blocks: tool_use_id, is_error, text; other text blocks: notes) and the
tool calls sent back. PORTFILE gets the port once
listening. Binds 127.0.0.1 only; stops by itself after 600 s.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]
LOCK = threading.Lock()
STATE = {"turn": 0, "n": 0}


def text_of(block):
    c = block.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(x.get("text", "") for x in c if isinstance(x, dict))
    return ""


def log(entry):
    with LOCK, open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply_json(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(b)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        log({"method": "GET", "path": self.path})
        self.reply_json(404, {"type": "error", "error": {
            "type": "not_found_error", "message": "not here"}})

    do_HEAD = do_GET

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        try:
            req = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?")[0]
        if path.endswith("/count_tokens"):
            log({"method": "POST", "path": path})
            return self.reply_json(200, {"input_tokens": 100})
        if not path.endswith("/v1/messages"):
            log({"method": "POST", "path": path})
            return self.reply_json(404, {"type": "error", "error": {
                "type": "not_found_error", "message": "not here"}})
        tools = [t.get("name") for t in req.get("tools") or []]
        main = "Bash" in tools
        msgs = req.get("messages") or []
        # what came back since the model's last turn: the user messages
        # after the last assistant message (tool results, hook feedback)
        k = len(msgs)
        while k > 0 and msgs[k - 1].get("role") != "assistant":
            k -= 1
        results, notes = [], []
        for m in msgs[k:]:
            c = m.get("content")
            for b in ([{"type": "text", "text": c}] if isinstance(c, str)
                      else c if isinstance(c, list) else []):
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_result":
                    results.append({"tool_use_id": b.get("tool_use_id"),
                                    "is_error": bool(b.get("is_error")),
                                    "text": text_of(b)})
                elif b.get("type") == "text" and k > 0:
                    notes.append(b.get("text", ""))
        with LOCK:
            STATE["n"] += 1
            if main:
                turn = STATE["turn"]
                STATE["turn"] += 1
            else:
                turn = None
        if main and turn < len(SCRIPT):
            blocks = []
            for i, b in enumerate(SCRIPT[turn]):
                b = dict(b)
                if b["type"] == "tool_use":
                    b["id"] = "toolu_fake_%d_%d" % (turn, i)
                blocks.append(b)
            stop = "tool_use" if any(
                b["type"] == "tool_use" for b in blocks) else "end_turn"
        else:
            blocks = [{"type": "text", "text": "Done." if main else "ok"}]
            stop = "end_turn"
        log({"method": "POST", "path": path, "model": req.get("model"),
             "main": main, "turn": turn, "stream": bool(req.get("stream")),
             "tool_results": results, "notes": notes,
             "tool_calls": [{"id": b["id"], "name": b["name"],
                             "input": b["input"]}
                            for b in blocks if b["type"] == "tool_use"],
             "text": [b["text"] for b in blocks if b["type"] == "text"]})
        msg = {"id": "msg_fake_%d" % STATE["n"], "type": "message",
               "role": "assistant", "model": req.get("model") or "fake",
               "content": blocks, "stop_reason": stop,
               "stop_sequence": None,
               "usage": {"input_tokens": 100, "output_tokens": 20,
                         "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": 0}}
        if not req.get("stream"):
            return self.reply_json(200, msg)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_fake")
        self.send_header("connection", "close")
        self.end_headers()

        def ev(name, data):
            self.wfile.write(("event: %s\ndata: %s\n\n"
                              % (name, json.dumps(data))).encode())
            self.wfile.flush()

        start = dict(msg, content=[], stop_reason=None)
        start["usage"] = dict(msg["usage"], output_tokens=1)
        ev("message_start", {"type": "message_start", "message": start})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                ev("content_block_start", {
                    "type": "content_block_start", "index": i,
                    "content_block": {"type": "text", "text": ""}})
                ev("content_block_delta", {
                    "type": "content_block_delta", "index": i,
                    "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                ev("content_block_start", {
                    "type": "content_block_start", "index": i,
                    "content_block": {"type": "tool_use", "id": b["id"],
                                      "name": b["name"], "input": {}}})
                js = json.dumps(b["input"])
                for k in range(0, len(js), 40):   # in pieces, as the API
                    ev("content_block_delta", {
                        "type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta",
                                  "partial_json": js[k:k + 40]}})
            ev("content_block_stop", {"type": "content_block_stop",
                                      "index": i})
        ev("message_delta", {"type": "message_delta",
                             "delta": {"stop_reason": stop,
                                       "stop_sequence": None},
                             "usage": {"output_tokens": 20}})
        ev("message_stop", {"type": "message_stop"})
        self.close_connection = True


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    with open(sys.argv[3] + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(sys.argv[3] + ".tmp", sys.argv[3])
    threading.Timer(600, srv.shutdown).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
