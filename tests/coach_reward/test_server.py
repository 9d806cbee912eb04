"""Our OpenAI-compatible server and OpenAIBackend against each other over real HTTP on 127.0.0.1.

Failures and slow replies come from the server's test hooks (``inject_failures``/``inject_delay``),
so the client's retry, backoff and timeout code runs against real sockets and real status codes.
"""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

from coach_reward.backends import (
    BackendConnectionError,
    BackendHTTPError,
    BackendTimeoutError,
    OpenAIBackend,
    TransformersBackend,
)
from coach_reward.server import ChatCompletionServer, serve

CHATS = [[{"role": "user", "content": f"step {i}: is click(start_box='(1,{i})') right?"}] for i in range(6)]


@pytest.fixture(scope="module")
def server(tiny_lm):
    model, tok = tiny_lm
    srv = serve(TransformersBackend(model, tok), model_name="tiny-judge", batch_wait_s=0.02)
    yield srv
    srv.shutdown()


def _post(url: str, body: dict, headers: dict | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_models_and_health(server):
    client = OpenAIBackend(server.url, "tiny-judge")
    assert client.list_models() == ["tiny-judge"]
    with urllib.request.urlopen(server.url.removesuffix("/v1") + "/health", timeout=10) as resp:
        assert json.loads(resp.read()) == {"status": "ok"}


def test_http_results_equal_local_generation_and_are_batched(server, tiny_lm):
    model, tok = tiny_lm
    local = TransformersBackend(model, tok).generate(CHATS, max_new_tokens=6, logprobs=True, top_logprobs=3)
    client = OpenAIBackend(server.url, "tiny-judge", concurrency=6)
    before = server.stats["batches"]
    remote = client.generate(CHATS, max_new_tokens=6, logprobs=True, top_logprobs=3)
    assert [g[0].text for g in remote] == [g[0].text for g in local]
    for r, loc in zip(remote, local, strict=True):
        assert [t.token for t in r[0].token_logprobs] == [t.token for t in loc[0].token_logprobs]
        for a, b in zip(r[0].token_logprobs, loc[0].token_logprobs, strict=True):
            assert a.logprob == pytest.approx(b.logprob, abs=1e-5)
            assert a.top_logprobs.keys() == b.top_logprobs.keys()
        assert r[0].finish_reason == "length"
    assert server.stats["batches"] - before < len(CHATS)  # concurrent requests were generated together
    assert server.stats["largest_batch"] >= 2


def test_openai_shaped_reply(server):
    status, body = _post(server.url, {"model": "tiny-judge", "messages": CHATS[0], "max_tokens": 3, "n": 2,
                                      "temperature": 0, "logprobs": True, "top_logprobs": 2})
    assert status == 200
    assert body["object"] == "chat.completion" and body["model"] == "tiny-judge"
    assert body["id"].startswith("chatcmpl-")
    assert [c["index"] for c in body["choices"]] == [0, 1]
    choice = body["choices"][0]
    assert choice["message"]["role"] == "assistant" and isinstance(choice["message"]["content"], str)
    entry = choice["logprobs"]["content"][0]
    assert set(entry) == {"token", "logprob", "bytes", "top_logprobs"}
    assert len(entry["top_logprobs"]) <= 2 and entry["bytes"] == list(entry["token"].encode())
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] and usage["prompt_tokens"] > 0


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        ({"messages": CHATS[0], "model": "other"}, 404, "model"),
        ({"messages": CHATS[0], "stream": True}, 400, "stream"),
        ({"messages": []}, 400, "messages"),
        ({"messages": [{"role": "user"}]}, 400, "messages"),
        ({"messages": CHATS[0], "max_tokens": 0}, 400, "max_tokens"),
        ({"messages": CHATS[0], "n": 99}, 400, "n"),
        ({"messages": CHATS[0], "temperature": "hot"}, 400, "temperature"),
        ({"messages": CHATS[0], "top_logprobs": 3}, 400, "top_logprobs"),
        ({"messages": CHATS[0], "logprobs": True, "top_logprobs": 50}, 400, "top_logprobs"),
        ({"messages": CHATS[0], "top_p": 0.5}, 400, "top_p"),
        ({"messages": CHATS[0], "stop": ["\n"]}, 400, "stop"),
    ],
)
def test_bad_requests_get_clear_openai_errors(server, body, status, param):
    got, reply = _post(server.url, body)
    assert got == status
    assert reply["error"]["param"] == param
    assert reply["error"]["message"]


def test_image_to_a_text_model_is_a_400(server):
    chat = [{"role": "user", "content": [{"type": "image", "image": np.zeros((4, 4, 3), np.uint8)}]}]
    with pytest.raises(BackendHTTPError, match="processor") as info:
        OpenAIBackend(server.url, "tiny-judge").generate([chat], max_new_tokens=2)
    assert info.value.status == 400


def test_not_json_and_unknown_route(server):
    req = urllib.request.Request(server.url + "/chat/completions", data=b"{oops", method="POST")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code == 400 and "not valid JSON" in json.loads(info.value.read())["error"]["message"]
    with pytest.raises(BackendHTTPError) as info2:
        OpenAIBackend(server.url.removesuffix("/v1") + "/v2", "tiny-judge", max_retries=0).list_models()
    assert info2.value.status == 404


def test_retries_after_503_then_succeeds(server):
    client = OpenAIBackend(server.url, "tiny-judge", max_retries=3, backoff_base=0.01)
    before = server.stats["requests"]
    server.inject_failures(2, status=503)
    out = client.generate(CHATS[:1], max_new_tokens=2)
    assert len(out[0]) == 1
    assert server.stats["requests"] - before == 3  # two failures, then the success


def test_429_honours_retry_after(server):
    client = OpenAIBackend(server.url, "tiny-judge", max_retries=1, backoff_base=5.0)
    server.inject_failures(1, status=429, retry_after="0.2")
    start = time.perf_counter()
    client.generate(CHATS[:1], max_new_tokens=2)
    elapsed = time.perf_counter() - start
    assert 0.2 <= elapsed < 3.0  # waited Retry-After (0.2 s), not the 5 s backoff


def test_gives_up_after_max_retries(server):
    client = OpenAIBackend(server.url, "tiny-judge", max_retries=2, backoff_base=0.01)
    server.inject_failures(3, status=502)
    with pytest.raises(BackendHTTPError, match="gave up after 3 attempts") as info:
        client.generate(CHATS[:1], max_new_tokens=2)
    assert info.value.status == 502


def test_client_errors_are_not_retried(server):
    client = OpenAIBackend(server.url, "wrong-model", max_retries=3, backoff_base=0.01)
    before = server.stats["requests"]
    with pytest.raises(BackendHTTPError, match="does not exist") as info:
        client.generate(CHATS[:1], max_new_tokens=2)
    assert info.value.status == 404
    assert server.stats["requests"] - before == 1


def test_timeout(server):
    client = OpenAIBackend(server.url, "tiny-judge", timeout=0.3, max_retries=0)
    server.inject_delay(1.5)
    start = time.perf_counter()
    with pytest.raises(BackendTimeoutError, match="no reply within 0.3 s"):
        client.generate(CHATS[:1], max_new_tokens=2)
    assert time.perf_counter() - start < 1.2


def test_timeout_then_retry_succeeds(server):
    client = OpenAIBackend(server.url, "tiny-judge", timeout=0.5, max_retries=1, backoff_base=0.01)
    server.inject_delay(1.2)
    assert len(client.generate(CHATS[:1], max_new_tokens=2)[0]) == 1


def test_connection_refused_is_retried_then_reported():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = OpenAIBackend(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, backoff_base=0.01)
    with pytest.raises(BackendConnectionError, match="gave up after 2 attempts"):
        client.generate(CHATS[:1], max_new_tokens=2)


def test_api_key_is_sent_and_never_shown(tiny_lm, monkeypatch, caplog):
    secret = "sk-test-7f3a9c1e5b"
    monkeypatch.setenv("COACH_TEST_KEY", secret)
    model, tok = tiny_lm
    with serve(TransformersBackend(model, tok), model_name="tiny-judge", api_key_env="COACH_TEST_KEY") as srv:
        caplog.set_level(logging.DEBUG)
        client = OpenAIBackend(srv.url, "tiny-judge", api_key_env="COACH_TEST_KEY", max_retries=1, backoff_base=0.01)
        srv.inject_failures(1, status=503)
        assert len(client.generate(CHATS[:1], max_new_tokens=2)[0]) == 1
        # Without the key (another env var name): 401, not retried.
        with pytest.raises(BackendHTTPError, match="API key") as info:
            OpenAIBackend(srv.url, "tiny-judge", api_key_env="COACH_TEST_MISSING").generate(CHATS[:1], max_new_tokens=2)
        assert info.value.status == 401
        status, _ = _post(srv.url, {"messages": CHATS[0], "max_tokens": 2}, {"Authorization": "Bearer wrong"})
        assert status == 401
        shown = [repr(client), str(client), repr(srv), str(vars(client)), caplog.text, str(info.value)]
    assert caplog.text  # the retry was logged...
    assert all(secret not in s for s in shown)  # ...and the key appears nowhere


def test_server_needs_the_key_variable_set(tiny_lm, monkeypatch):
    monkeypatch.delenv("COACH_TEST_UNSET", raising=False)
    model, tok = tiny_lm
    with pytest.raises(ValueError, match="COACH_TEST_UNSET"):
        ChatCompletionServer(TransformersBackend(model, tok), api_key_env="COACH_TEST_UNSET")


def test_serve_from_a_model_folder(tiny_model_dir):
    with serve(tiny_model_dir) as srv:
        assert OpenAIBackend(srv.url, tiny_model_dir.name).list_models() == [tiny_model_dir.name]
    with pytest.raises(FileNotFoundError):
        serve(tiny_model_dir / "missing")


@pytest.mark.slow
def test_command_line_server(tiny_model_dir):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "coach_reward.server", "--model", str(tiny_model_dir),
                             "--port", str(port), "--model-name", "cli-tiny"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = []
        for line in proc.stdout:  # loading progress bars come first
            seen.append(line)
            if line.startswith("serving"):
                break
        assert f"127.0.0.1:{port}/v1" in seen[-1], seen
        client = OpenAIBackend(f"http://127.0.0.1:{port}/v1", "cli-tiny", max_retries=5, backoff_base=0.2)
        assert len(client.generate(CHATS[:1], max_new_tokens=2)[0]) == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
