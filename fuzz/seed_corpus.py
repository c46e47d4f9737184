#!/usr/bin/env python3
"""Writes the generated seeds of fuzz/corpus/ from real requests.

Usage: fuzz/seed_corpus.py TRANSCRIPTS_DIR

Sources: the reference Agent Server transcripts (TRANSCRIPTS_DIR, the wire recorded between the
official SDK clients and the LangGraph server), the HITL scenarios of tests/scenarios/, the
config files of examples/, tests/e2e/ and bench/, and the official JSON-Schema-Test-Suite
(Debian package json-schema-test-suite). A generated seed is named by the first 16 hex digits
of its SHA-1; running the script again replaces every such file and keeps the hand-written
seeds (descriptive names) and the crash inputs found by the fuzz tier (crash-*, named by
libFuzzer), so the corpus stays reproducible. Ids and assistant names in the transcripts are
rewritten to the ones the fuzz fixture (fuzz/api_fixture.cpp) knows, so seeds reach past
"not found".
"""
import hashlib
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
SCHEMA_SUITE = pathlib.Path("/usr/share/json-schema-test-suite/tests/draft7")
CONFIG_FILES = ["examples/config/tollgate.json", "tests/e2e/tollgate-e2e.json", "bench/http/tollgate.json"]
METHODS = "GET|POST|PATCH|PUT|DELETE|OPTIONS|HEAD"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
SEED_THREAD_ID = "00000000-0000-4000-8000-00000000f022"  # ApiFixture::kSeedThreadId
GENERATED = re.compile(r"^[0-9a-f]{16}$")


class Request:
    def __init__(self, method, path, headers=None, body=""):
        self.method, self.path, self.headers, self.body = method, path, dict(headers or {}), body


def transcript_requests(folder):
    """Every request of every transcript, in its three layouts."""
    requests = []
    for file in sorted(pathlib.Path(folder).glob("*.txt")):
        lines = file.read_text(encoding="utf-8").splitlines()
        current = None
        for i, line in enumerate(lines):
            # ">>> [n] METHOD /path", "   name: value" headers, ">>> body: {...}" (SDK wire logs)
            m = re.match(rf"^>>> \[\d+\] ({METHODS}) (/\S*)$", line)
            if m:
                current = Request(m[1], m[2])
                requests.append(current)
                continue
            if current and line.startswith(">>> body: "):
                current.body = line[len(">>> body: "):]
                continue
            m = re.match(r"^   ([A-Za-z-]+): (.*)$", line)
            if current and m and i > 0 and not lines[i - 1].startswith("<<<"):
                current.headers[m[1].lower()] = m[2]
                continue
            if line.startswith("<<<") or not line.strip():
                current = None
            # "REQUEST: METHOD /path  {body}"
            m = re.match(rf"^REQUEST: ({METHODS}) (/\S*)(?:  (.*))?$", line)
            if m:
                requests.append(Request(m[1], m[2], body=m[3] or ""))
                continue
            # "################ ... METHOD /path ..." then maybe "REQUEST BODY: {...}"
            m = re.match(rf"^#+ .*?\b({METHODS}) (/[^\s<]*)(?:\s|$)", line)
            if m and "<" not in line.split(m[2], 1)[1][:1]:
                request = Request(m[1], m[2])
                nxt = lines[i + 1] if i + 1 < len(lines) else ""
                if nxt.startswith("REQUEST BODY: "):
                    request.body = nxt[len("REQUEST BODY: "):]
                event_id = re.search(r"Last-Event-ID: (\S+)", line)
                if event_id:
                    request.headers["last-event-id"] = event_id[1].rstrip(")")
                requests.append(request)
    return requests


def for_fixture(text):
    """Transcript assistant names become the fixture's graph."""
    return re.sub(r'"assistant_id":"[^"]*"', '"assistant_id":"agent"', text)


def raw_http(request):
    body = for_fixture(request.body).encode()
    path = re.sub(rf"^/threads/{UUID}", "/threads/" + SEED_THREAD_ID, request.path)
    head = [f"{request.method} {path} HTTP/1.1", "host: 127.0.0.1"]
    headers = dict(request.headers)
    if body:
        headers.setdefault("content-type", "application/json")
        headers["content-length"] = str(len(body))
    head += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def endpoint_of(method, path):
    """The fuzz_json_bodies line naming this request's endpoint."""
    path = path.split("?", 1)[0]
    path = re.sub(rf"^/threads/{UUID}/runs/{UUID}", "/threads/{run_thread}/runs/{run}", path)
    path = re.sub(rf"^/threads/{UUID}", "/threads/{thread}", path)
    if method == "PATCH":
        path = re.sub(r"^/assistants/[^/]+$", "/assistants/{assistant}", path)
    return f"{method} {path}"


def json_body_endpoints():
    source = (ROOT / "fuzz" / "fuzz_json_bodies.cpp").read_text()
    block = source.split("kEndpoints = {", 1)[1].split("};", 1)[0]
    return set(re.findall(r'"([A-Z]+ [^"]+)"', block))


def find_key(value, key):
    """Every value of `key` anywhere in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                yield v
            yield from find_key(v, key)
    elif isinstance(value, list):
        for v in value:
            yield from find_key(v, key)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    requests = transcript_requests(sys.argv[1])
    scenarios = [json.loads(p.read_text()) for p in sorted((ROOT / "tests" / "scenarios").glob("*.json"))]
    configs = [(ROOT / name).read_text() for name in CONFIG_FILES]
    seeds = {name: set() for name in
             ["http_request", "json_bodies", "hitl_decisions", "when_rule", "agent_config",
              "json_schema", "last_event_id"]}

    endpoints = json_body_endpoints()
    for r in requests:
        seeds["http_request"].add(raw_http(r))
        if r.body and endpoint_of(r.method, r.path) in endpoints:
            seeds["json_bodies"].add(f"{endpoint_of(r.method, r.path)}\n{for_fixture(r.body)}".encode())
        if "last-event-id" in r.headers:
            seeds["last_event_id"].add(r.headers["last-event-id"].encode())
        try:
            body = json.loads(r.body) if r.body else None
        except json.JSONDecodeError:
            body = None
        for resume in find_key(body, "resume"):
            seeds["hitl_decisions"].add(compact(resume).encode())

    for s in scenarios:
        for step in s.get("steps", []):
            if "resume" in step:
                seeds["hitl_decisions"].add(compact(step["resume"]).encode())
                seeds["json_bodies"].add(("POST /threads/{thread}/runs/wait\n" + compact(
                    {"assistant_id": "agent", "command": {"resume": step["resume"]}})).encode())
            if "input" in step:
                seeds["json_bodies"].add(("POST /threads/{thread}/runs/stream\n" + compact(
                    {"assistant_id": "agent", "input": step["input"],
                     "stream_mode": ["values", "updates"]})).encode())
        agent = dict(s.get("agent", {}), model="demo")
        seeds["agent_config"].add(compact({"agents": {s["name"]: agent}}).encode())
        for rule in find_key(s.get("agent", {}), "when"):
            seeds["when_rule"].add(compact(rule).encode())
    for text in configs:
        seeds["agent_config"].add(text.encode())
        for rule in find_key(json.loads(text), "when"):
            seeds["when_rule"].add(compact(rule).encode())

    # One [schema, value] pair per group of the draft 7 suite: its first test's data.
    for file in sorted(SCHEMA_SUITE.glob("*.json")):
        for group in json.loads(file.read_text()):
            if group.get("tests"):
                seeds["json_schema"].add(compact([group["schema"], group["tests"][0]["data"]]).encode())

    for name, contents in seeds.items():
        folder = CORPUS / name
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            if GENERATED.match(old.name):
                old.unlink()
        for content in contents:
            (folder / hashlib.sha1(content).hexdigest()[:16]).write_bytes(content)
        print(f"{name}: {len(contents)} generated seeds, {len(list(folder.iterdir()))} files")


if __name__ == "__main__":
    main()
