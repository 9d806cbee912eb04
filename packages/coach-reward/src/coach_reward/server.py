"""A small OpenAI-compatible HTTP server around a local backend (stdlib ``http.server``, no extra deps).

It lets judges that speak the OpenAI API (``OpenAIBackend``, other tools, other machines) use a
local transformers model: ``POST /v1/chat/completions`` (messages, max_tokens, temperature, n,
logprobs, top_logprobs) and ``GET /v1/models``. Concurrent requests with the same sampling settings
are gathered for a few milliseconds and generated as one batch. Start it in a thread with
``serve(...)`` (tests, notebooks) or from a shell::

    python -m coach_reward.server --model DIR --port 8000
"""

from __future__ import annotations

import argparse
import hmac
import json
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from coach_reward.backends import Backend, Completion, TransformersBackend, normalize_messages

__all__ = ["ChatCompletionServer", "main", "serve", "serve_forever"]

logger = logging.getLogger(__name__)

MAX_TOP_LOGPROBS = 20


class _RequestError(Exception):
    """A client error: becomes an OpenAI-shaped error body with ``status``."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code


@dataclass
class _Job:
    messages: list[dict[str, Any]]
    key: tuple
    done: threading.Event = field(default_factory=threading.Event)
    result: list[Completion] | None = None
    error: BaseException | None = None


class ChatCompletionServer:
    """An OpenAI-compatible chat server for one backend; ``start()`` runs it in a daemon thread.

    ``api_key_env`` names an environment variable holding the key clients must send as
    ``Authorization: Bearer ...`` (no auth when None). ``inject_failures`` and ``inject_delay`` are
    test hooks that make the next requests fail or stall, to exercise client retries and timeouts.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        model_name: str = "coach-reward",
        host: str = "127.0.0.1",
        port: int = 0,
        api_key_env: str | None = None,
        max_batch: int = 8,
        batch_wait_s: float = 0.005,
        max_n: int = 16,
        max_tokens_limit: int = 4096,
        max_body_bytes: int = 32 * 1024 * 1024,
    ):
        if not hasattr(backend, "generate"):
            raise TypeError(f"backend must have a generate() method (a coach_reward Backend), got {type(backend).__name__}")
        self.backend = backend
        self.model_name = model_name
        self.max_batch = max_batch
        self.batch_wait_s = batch_wait_s
        self.max_n = max_n
        self.max_tokens_limit = max_tokens_limit
        self.max_body_bytes = max_body_bytes
        self._api_key: str | None = None
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise ValueError(f"api_key_env={api_key_env!r} is set but that environment variable is empty or unset")
            self._api_key = key
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._hook_lock = threading.Lock()
        self._fail: list[tuple[int, str | None]] = []
        self._delays: list[float] = []
        self.stats = {"requests": 0, "completions": 0, "batches": 0, "largest_batch": 0, "injected_failures": 0}
        self._httpd = ThreadingHTTPServer((host, port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.app = self  # type: ignore[attr-defined]
        self._threads: list[threading.Thread] = []
        self._worker = threading.Thread(target=self._work, name="coach-reward-batcher", daemon=True)
        self._worker.start()

    # ---- lifecycle -----------------------------------------------------------------------------
    @property
    def host(self) -> str:
        """The address the server listens on."""
        return self._httpd.server_address[0]

    @property
    def port(self) -> int:
        """The TCP port (the real one when 0 was asked for)."""
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """Base URL for OpenAI clients, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    def __repr__(self) -> str:
        return f"ChatCompletionServer(url={self.url!r}, model_name={self.model_name!r}, auth={self._api_key is not None})"

    def start(self) -> ChatCompletionServer:
        """Serve in a background daemon thread and return self."""
        thread = threading.Thread(target=self._httpd.serve_forever, name="coach-reward-http", daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until ``shutdown()`` (or Ctrl-C)."""
        self._httpd.serve_forever()

    def shutdown(self) -> None:
        """Stop serving, close the socket and stop the batching thread."""
        if self._threads:
            self._httpd.shutdown()
        self._httpd.server_close()
        self._jobs.put(None)
        self._worker.join(timeout=5)

    def __enter__(self) -> ChatCompletionServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # ---- test hooks ----------------------------------------------------------------------------
    def inject_failures(self, count: int, status: int = 503, retry_after: str | None = None) -> None:
        """Test hook: answer the next ``count`` chat requests with HTTP ``status`` (and ``Retry-After``)."""
        with self._hook_lock:
            self._fail.extend([(status, retry_after)] * count)

    def inject_delay(self, seconds: float, count: int = 1) -> None:
        """Test hook: sleep ``seconds`` before handling each of the next ``count`` chat requests."""
        with self._hook_lock:
            self._delays.extend([seconds] * count)

    def _count(self, name: str, amount: int = 1) -> None:
        with self._hook_lock:
            self.stats[name] += amount

    def _take_hooks(self) -> tuple[tuple[int, str | None] | None, float]:
        with self._hook_lock:
            self.stats["requests"] += 1
            fail = self._fail.pop(0) if self._fail else None
            delay = self._delays.pop(0) if self._delays else 0.0
            if fail:
                self.stats["injected_failures"] += 1
        return fail, delay

    # ---- request handling ----------------------------------------------------------------------
    def check_auth(self, header: str | None) -> bool:
        """Whether an Authorization header carries the expected key (always True without auth)."""
        if self._api_key is None:
            return True
        expected = "Bearer " + self._api_key
        return header is not None and hmac.compare_digest(header.encode(), expected.encode())

    def chat_completion(self, body: Any) -> dict[str, Any]:
        """Validate an OpenAI chat request, generate (batched with concurrent requests), build the reply."""
        params = self._validate(body)
        messages = params.pop("messages")
        key = tuple(sorted(params.items()))
        job = _Job(messages=messages, key=key)
        self._jobs.put(job)
        job.done.wait()
        if job.error is not None:
            if isinstance(job.error, (ValueError, TypeError)):
                raise _RequestError(400, str(job.error))
            raise job.error
        return self._reply(job.result or [], params)

    def _validate(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, Mapping):
            raise _RequestError(400, "the request body must be a JSON object")
        model = body.get("model")
        if model is not None and model != self.model_name:
            raise _RequestError(404, f"the model {model!r} does not exist; this server offers {self.model_name!r}",
                                "model", "model_not_found")
        if body.get("stream"):
            raise _RequestError(400, "stream=true is not supported by this server", "stream")
        for name, neutral in (("top_p", 1), ("presence_penalty", 0), ("frequency_penalty", 0)):
            if body.get(name) not in (None, neutral):
                raise _RequestError(400, f"{name} is not supported (only the default {neutral})", name)
        for name in ("stop", "tools", "functions", "response_format", "seed", "logit_bias"):
            if body.get(name):
                raise _RequestError(400, f"{name} is not supported by this server", name)
        try:
            messages = normalize_messages(body.get("messages"), images="pil")  # type: ignore[arg-type]
        except (ValueError, TypeError) as exc:
            raise _RequestError(400, f"messages: {exc}", "messages") from None
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens", 256))
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 1 <= max_tokens <= self.max_tokens_limit:
            raise _RequestError(400, f"max_tokens must be an integer in 1..{self.max_tokens_limit}", "max_tokens")
        temperature = body.get("temperature", 1.0)
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
            raise _RequestError(400, "temperature must be a number in [0, 2]", "temperature")
        n = body.get("n", 1)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= self.max_n:
            raise _RequestError(400, f"n must be an integer in 1..{self.max_n}", "n")
        logprobs = body.get("logprobs", False)
        if not isinstance(logprobs, bool):
            raise _RequestError(400, "logprobs must be true or false", "logprobs")
        top = body.get("top_logprobs")
        if top is not None:
            if isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_TOP_LOGPROBS:
                raise _RequestError(400, f"top_logprobs must be an integer in 0..{MAX_TOP_LOGPROBS}", "top_logprobs")
            if top and not logprobs:
                raise _RequestError(400, "top_logprobs needs logprobs=true", "top_logprobs")
        return {"messages": messages, "max_new_tokens": max_tokens, "temperature": float(temperature), "n": n,
                "logprobs": logprobs, "top_logprobs": top or 0}

    def _reply(self, completions: list[Completion], params: Mapping[str, Any]) -> dict[str, Any]:
        choices = []
        for i, c in enumerate(completions):
            logprobs = None
            if params["logprobs"] and c.token_logprobs is not None:
                logprobs = {"content": [
                    {"token": t.token, "logprob": t.logprob, "bytes": list(t.token.encode("utf-8")),
                     "top_logprobs": [{"token": a, "logprob": lp, "bytes": list(a.encode("utf-8"))}
                                      for a, lp in sorted(t.top_logprobs.items(), key=lambda kv: -kv[1])]}
                    for t in c.token_logprobs
                ]}
            choices.append({"index": i, "message": {"role": "assistant", "content": c.text},
                            "logprobs": logprobs, "finish_reason": c.finish_reason or "stop"})
        prompt = (completions[0].prompt_tokens or 0) if completions else 0
        completion = sum(c.completion_tokens or 0 for c in completions)
        return {
            "id": "chatcmpl-" + uuid.uuid4().hex,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": choices,
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def models(self) -> dict[str, Any]:
        """The ``GET /v1/models`` body."""
        return {"object": "list", "data": [{"id": self.model_name, "object": "model", "created": 0,
                                             "owned_by": "coach-reward"}]}

    # ---- batching worker -----------------------------------------------------------------------
    def _work(self) -> None:
        while True:
            first = self._jobs.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.batch_wait_s
            stop = False
            while len(batch) < self.max_batch:
                remaining = deadline - time.monotonic()
                try:
                    job = self._jobs.get(timeout=max(remaining, 0)) if remaining > 0 else self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is None:
                    stop = True
                    break
                batch.append(job)
            groups: dict[tuple, list[_Job]] = {}
            for job in batch:
                groups.setdefault(job.key, []).append(job)
            for key, jobs in groups.items():
                self._run(dict(key), jobs)
            if stop:
                return

    def _run(self, params: dict[str, Any], jobs: list[_Job]) -> None:
        with self._hook_lock:
            self.stats["batches"] += 1
            self.stats["largest_batch"] = max(self.stats["largest_batch"], len(jobs))
        try:
            results = self.backend.generate([j.messages for j in jobs], **params)
        except Exception as exc:
            if len(jobs) > 1:  # isolate the request that fails instead of failing the whole batch
                for job in jobs:
                    self._run(params, [job])
                return
            logger.warning("generation failed: %s: %s", type(exc).__name__, exc)
            jobs[0].error = exc
            jobs[0].done.set()
            return
        for job, result in zip(jobs, results, strict=True):
            job.result = result
            self._count("completions", len(result))
            job.done.set()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "coach-reward"

    @property
    def app(self) -> ChatCompletionServer:
        return self.server.app  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        logger.info("%s %s", self.address_string(), format % args)

    def _send(self, status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(body).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (e.g. its timeout)
            self.close_connection = True

    def _error(self, err: _RequestError, headers: Mapping[str, str] | None = None) -> None:
        kind = "invalid_request_error" if err.status < 500 else "server_error"
        self._send(err.status, {"error": {"message": err.message, "type": kind, "param": err.param,
                                          "code": err.code}}, headers)

    def _authorised(self) -> bool:
        if self.app.check_auth(self.headers.get("Authorization")):
            return True
        self._error(_RequestError(401, "missing or wrong API key", code="invalid_api_key"))
        return False

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/health":
            self._send(200, {"status": "ok"})
        elif path == "/v1/models":
            if self._authorised():
                self._send(200, self.app.models())
        else:
            self._error(_RequestError(404, f"no route GET {path}"))

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        if length > self.app.max_body_bytes:
            self.close_connection = True
            self._error(_RequestError(413, f"request body over {self.app.max_body_bytes} bytes"))
            return
        raw = self.rfile.read(length) if length else b""
        if path != "/v1/chat/completions":
            self._error(_RequestError(404, f"no route POST {path}"))
            return
        if not self._authorised():
            return
        fail, delay = self.app._take_hooks()
        if delay:
            time.sleep(delay)
        if fail is not None:
            status, retry_after = fail
            self._error(_RequestError(status, f"injected failure (HTTP {status})"),
                        {"Retry-After": retry_after} if retry_after is not None else None)
            return
        try:
            body = json.loads(raw or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            self._error(_RequestError(400, f"the request body is not valid JSON: {exc}"))
            return
        try:
            self._send(200, self.app.chat_completion(body))
        except _RequestError as err:
            self._error(err)
        except Exception as exc:
            logger.exception("chat completion failed")
            self._error(_RequestError(500, f"generation failed: {type(exc).__name__}: {exc}"))


def serve(
    model_dir_or_backend: str | os.PathLike[str] | Backend,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    model_name: str | None = None,
    device: str = "cpu",
    **server_kwargs: Any,
) -> ChatCompletionServer:
    """Start an OpenAI-compatible server in a background thread and return it (``.url``, ``.shutdown()``).

    ``model_dir_or_backend`` is a local model folder (loaded with ``TransformersBackend.from_pretrained``)
    or any Backend. Port 0 picks a free port.
    """
    if isinstance(model_dir_or_backend, (str, os.PathLike)):
        path = Path(model_dir_or_backend)
        if not path.is_dir():
            raise FileNotFoundError(f"model folder not found: {path}")
        backend: Backend = TransformersBackend.from_pretrained(str(path), device=device)
        name = model_name or path.name
    else:
        backend = model_dir_or_backend
        name = model_name or "coach-reward"
    return ChatCompletionServer(backend, model_name=name, host=host, port=port, **server_kwargs).start()


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m coach_reward.server --model DIR [--host H] [--port P]``."""
    parser = argparse.ArgumentParser(prog="python -m coach_reward.server", description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="local model folder (save_pretrained layout)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (0 picks a free one)")
    parser.add_argument("--model-name", default=None, help="name clients use (default: the folder name)")
    parser.add_argument("--device", default="cpu", help="torch device for the model (default cpu)")
    parser.add_argument("--batch-size", type=int, default=8, help="max requests generated together")
    parser.add_argument("--api-key-env", default=None, help="env var with the key clients must send (no auth if unset)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not Path(args.model).is_dir():
        parser.error(f"model folder not found: {args.model}")
    return serve_forever(args.model, model_name=args.model_name, host=args.host, port=args.port, device=args.device,
                         batch_size=args.batch_size, api_key_env=args.api_key_env)


def serve_forever(model_dir: str | os.PathLike[str], *, model_name: str | None = None, host: str = "127.0.0.1",
                  port: int = 8000, device: str = "cpu", batch_size: int = 8, api_key_env: str | None = None) -> int:
    """Serve a local model folder in the foreground until Ctrl-C (``coach-reward serve`` and this module's CLI)."""
    path = Path(model_dir)
    if not path.is_dir():
        raise FileNotFoundError(f"model folder not found: {path}")
    backend = TransformersBackend.from_pretrained(str(path), device=device, batch_size=batch_size)
    server = ChatCompletionServer(backend, model_name=model_name or path.name, host=host, port=port,
                                  api_key_env=api_key_env, max_batch=batch_size)
    print(f"serving {server.model_name!r} at {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
