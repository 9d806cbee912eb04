"""Text generation behind one interface: local transformers models, vLLM, or any OpenAI-compatible server.

Judges (the process reward model, LLM outcome verifiers) only need "chat messages in, completions
out, with token log-probabilities when available". ``Backend`` is that interface; the three
implementations below let the same judge run on a laptop CPU, a GPU with vLLM, or a remote server.

A request is an OpenAI-style list of messages ``{"role": ..., "content": ...}`` where content is a
string or a list of parts: ``{"type": "text", "text": ...}``, ``{"type": "image", "image": <PIL
image | uint8 array | bytes>}`` or ``{"type": "image_url", "image_url": {"url": "data:..."}}``.
Log-probabilities are those of the model's own distribution (raw logits, before temperature or
other sampling transforms), which is what vLLM and OpenAI report too.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import math
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, runtime_checkable

from coach_reward.prompts import image_data_url, to_pil_image

__all__ = [
    "Backend",
    "BackendConnectionError",
    "BackendError",
    "BackendHTTPError",
    "BackendTimeoutError",
    "ChatRequest",
    "Completion",
    "OpenAIBackend",
    "TokenLogprob",
    "TransformersBackend",
    "VLLMBackend",
    "generation_lock",
    "normalize_messages",
]

logger = logging.getLogger(__name__)

ChatRequest = Sequence[Mapping[str, Any]]
"""One chat: OpenAI-style messages, each ``{"role": ..., "content": str | list of parts}``."""

_ROLES = {"system", "user", "assistant", "tool", "developer"}


class TokenLogprob(NamedTuple):
    """One generated token: its text, its log-probability, and the top alternatives at that position."""

    token: str
    logprob: float
    top_logprobs: dict[str, float]


@dataclass
class Completion:
    """One generated reply; ``token_logprobs`` is None when log-probabilities were not requested or not given."""

    text: str
    token_logprobs: list[TokenLogprob] | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class BackendError(RuntimeError):
    """A backend could not produce completions; the message says which call failed and why."""


class BackendHTTPError(BackendError):
    """The server answered with an HTTP error status (``status``)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class BackendTimeoutError(BackendError):
    """The server did not answer within the timeout (after all retries)."""


class BackendConnectionError(BackendError):
    """The server could not be reached (after all retries)."""


@runtime_checkable
class Backend(Protocol):
    """Anything that turns chat requests into completions (``n`` per request, in request order)."""

    def generate(
        self,
        requests: Sequence[ChatRequest],
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
        logprobs: bool = False,
        top_logprobs: int = 0,
    ) -> list[list[Completion]]:
        """Return one list of ``n`` completions per request; temperature 0 means greedy decoding."""
        ...


def _check_generate_args(max_new_tokens: int, temperature: float, n: int, top_logprobs: int) -> None:
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a positive int, got {max_new_tokens!r}")
    if not isinstance(temperature, (int, float)) or not math.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if not isinstance(top_logprobs, int) or top_logprobs < 0:
        raise ValueError(f"top_logprobs must be an int >= 0, got {top_logprobs!r}")


_GENERATION_LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def generation_lock(engine: Any) -> threading.Lock:
    """The lock that serialises generation with ``engine`` (a torch model, a ``vllm.LLM``) across threads.

    Neither a Hugging Face model and its tokenizer nor a vLLM engine may generate for two threads at once (the
    backend flips the model's train/eval mode around ``generate``, the fast tokenizer's padding settings are
    process-wide state, vLLM's engine is single-threaded), and a worker that drives several devices in threads
    scores all their steps with one PRM. One lock per engine, not per backend: two backends over one model
    share it. Kept outside the backend so that a backend still pickles (Ray ships it to workers).
    """
    with _LOCKS_LOCK:
        lock = _GENERATION_LOCKS.get(engine)
        if lock is None:
            lock = _GENERATION_LOCKS[engine] = threading.Lock()
        return lock


class _CheckedBackend:
    """What every backend here shares: the ``Backend.generate`` signature, checking its arguments once, then
    handing a list of requests to the subclass's ``_generate``."""

    def generate(
        self,
        requests: Sequence[ChatRequest],
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        n: int = 1,
        logprobs: bool = False,
        top_logprobs: int = 0,
    ) -> list[list[Completion]]:
        """Return one list of ``n`` completions per request, in request order; temperature 0 means greedy."""
        _check_generate_args(max_new_tokens, temperature, n, top_logprobs)
        return self._generate(list(requests), max_new_tokens, temperature, n, logprobs, top_logprobs)

    def _generate(self, requests: list[ChatRequest], max_new_tokens: int, temperature: float, n: int,
                  logprobs: bool, top_logprobs: int) -> list[list[Completion]]:
        raise NotImplementedError


def normalize_messages(messages: ChatRequest, *, images: str = "pil") -> list[dict[str, Any]]:
    """Validate one chat and return a plain copy with images as PIL parts (``images="pil"``) or data URLs ("url").

    Raises ValueError naming the message and part that is malformed.
    """
    if images not in ("pil", "url"):
        raise ValueError(f"images must be 'pil' or 'url', got {images!r}")
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise ValueError("a chat request must be a non-empty list of {'role', 'content'} messages")
    out: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping) or "role" not in msg or "content" not in msg:
            raise ValueError(f"message {i} must be a mapping with 'role' and 'content'")
        role = msg["role"]
        if role not in _ROLES:
            raise ValueError(f"message {i} has unknown role {role!r}; expected one of {sorted(_ROLES)}")
        content = msg["content"]
        if content is None:
            content = ""
        if isinstance(content, str):
            out.append({"role": role, "content": content})
            continue
        if not isinstance(content, Sequence):
            raise ValueError(f"message {i} content must be a string or a list of parts")
        parts: list[dict[str, Any]] = []
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, Mapping) else None
            if kind == "text":
                if not isinstance(part.get("text"), str):
                    raise ValueError(f"message {i} part {j}: a text part needs a string 'text'")
                parts.append({"type": "text", "text": part["text"]})
            elif kind in ("image", "image_url"):
                parts.append(_image_part(part, images, f"message {i} part {j}"))
            else:
                raise ValueError(f"message {i} part {j}: unknown part type {kind!r} (expected text, image, image_url)")
        out.append({"role": role, "content": parts})
    return out


def _image_part(part: Mapping[str, Any], images: str, where: str) -> dict[str, Any]:
    if part["type"] == "image":
        image = part.get("image")
        if image is None:
            raise ValueError(f"{where}: an image part needs 'image' (PIL image, uint8 array or bytes)")
        if images == "pil":
            return {"type": "image", "image": to_pil_image(image)}
        return {"type": "image_url", "image_url": {"url": image_data_url(image)}}
    spec = part.get("image_url")
    url = spec.get("url") if isinstance(spec, Mapping) else spec
    if not isinstance(url, str):
        raise ValueError(f"{where}: an image_url part needs image_url.url")
    if images == "url":
        return {"type": "image_url", "image_url": {"url": url}}
    if not url.startswith("data:") or ";base64," not in url:
        raise ValueError(f"{where}: only base64 data: URLs can be used locally (remote image URLs are not fetched)")
    try:
        raw = base64.b64decode(url.split(";base64,", 1)[1], validate=True)
        return {"type": "image", "image": to_pil_image(raw)}
    except Exception as exc:
        raise ValueError(f"{where}: the data: URL is not a readable base64 image ({exc})") from exc


def _has_images(messages: list[dict[str, Any]]) -> bool:
    return any(isinstance(m["content"], list) and any(p["type"] != "text" for p in m["content"]) for m in messages)


def _drop_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        if isinstance(m["content"], list):
            m = {"role": m["role"], "content": [p for p in m["content"] if p["type"] == "text"]}
        out.append(m)
    return out


def _add_logprob(table: dict[str, float], token: str, logprob: float) -> None:
    """Record an alternative; distinct ids that read as the same text have their probabilities added."""
    if token in table:
        a, b = table[token], logprob
        hi = max(a, b)
        table[token] = hi + math.log(math.exp(a - hi) + math.exp(b - hi)) if hi > -math.inf else hi
    else:
        table[token] = logprob


# --------------------------------------------------------------------------------------------------
# Local transformers models
# --------------------------------------------------------------------------------------------------


class TransformersBackend(_CheckedBackend):
    """Generate with a local Hugging Face model: batched, left-padded, log-probabilities from the logits.

    ``tokenizer_or_processor`` is a tokenizer (text models) or a processor with an image processor
    (vision-language models). Chats with images given to a text model raise ValueError unless
    ``images="drop"``. ``generate_kwargs`` are passed to ``model.generate`` (e.g. a logits processor).
    ``sanitize_control_tokens=True`` encodes special tokens written inside message text (``<|im_end|>``
    ...) as plain text; off by default, like vLLM and OpenAI-compatible servers, so that all backends
    see the same tokens (the judge prompts already defuse such tokens in untrusted text).
    """

    def __init__(
        self,
        model: Any,
        tokenizer_or_processor: Any,
        *,
        device: str | None = "cpu",
        batch_size: int = 8,
        images: str = "error",
        generate_kwargs: Mapping[str, Any] | None = None,
        sanitize_control_tokens: bool = False,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if images not in ("error", "drop"):
            raise ValueError(f"images must be 'error' or 'drop', got {images!r}")
        self.model = model if device is None else model.to(device)
        self.device = self.model.device
        self.processor = tokenizer_or_processor if hasattr(tokenizer_or_processor, "image_processor") else None
        self.tokenizer = tokenizer_or_processor.tokenizer if self.processor is not None else tokenizer_or_processor
        if getattr(self.tokenizer, "chat_template", None) is None and getattr(self.processor, "chat_template", None) is None:
            raise ValueError("the tokenizer/processor has no chat_template; set one before building the backend")
        self.batch_size = batch_size
        self.images = images
        self.generate_kwargs = dict(generate_kwargs or {})
        self.sanitize_control_tokens = sanitize_control_tokens
        stop = set()
        for source in (getattr(self.model, "generation_config", None), self.tokenizer):
            ids = getattr(source, "eos_token_id", None)
            if ids is not None:
                stop.update(ids if isinstance(ids, (list, tuple, set)) else [ids])
        self._stop_ids = stop
        self._pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else min(stop, default=0)
        self._pieces: dict[int, str] = {}

    def _piece(self, token_id: int) -> str:
        """The text of one token id (cached: log-probability tables decode the same ids over and over)."""
        piece = self._pieces.get(token_id)
        if piece is None:
            piece = self._pieces[token_id] = self.tokenizer.decode([token_id])
        return piece

    @classmethod
    def from_pretrained(cls, path: str, *, device: str | None = "cpu", **kwargs: Any) -> TransformersBackend:
        """Load a causal LM and its tokenizer (or processor, when the folder has one) from a local folder."""
        from transformers import AutoModelForCausalLM, AutoProcessor, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(path)
        try:
            processor = AutoProcessor.from_pretrained(path)
        except Exception:  # a text-only folder: AutoProcessor may fail or return a bare tokenizer
            processor = None
        if processor is None or not hasattr(processor, "image_processor"):
            processor = AutoTokenizer.from_pretrained(path)
        return cls(model, processor, device=device, **kwargs)

    def __repr__(self) -> str:
        name = getattr(getattr(self.model, "config", None), "_name_or_path", "") or type(self.model).__name__
        return f"TransformersBackend(model={name!r}, device={str(self.device)!r}, batch_size={self.batch_size})"

    def _encode(self, chats: list[list[dict[str, Any]]]) -> dict[str, Any]:
        common = {"add_generation_prompt": True, "tokenize": True, "return_dict": True, "return_tensors": "pt",
                  "sanitize_control_tokens": self.sanitize_control_tokens}
        if self.processor is not None:
            enc = self.processor.apply_chat_template(
                chats, processor_kwargs={"padding": True, "padding_side": "left"}, **common)
        else:
            enc = self.tokenizer.apply_chat_template(
                chats, padding=True, tokenizer_kwargs={"padding_side": "left"}, **common)
        return {k: v.to(self.device) if hasattr(v, "to") else v for k, v in dict(enc).items()}

    def _prepare(self, request: ChatRequest) -> list[dict[str, Any]]:
        msgs = normalize_messages(request, images="pil")
        if self.processor is None and _has_images(msgs):
            if self.images == "error":
                raise ValueError("this TransformersBackend has a text tokenizer and the request has images: "
                                 "pass a processor for a vision-language model, or images='drop' to ignore them")
            msgs = _drop_images(msgs)
        return msgs

    def _generate(self, requests: list[ChatRequest], max_new_tokens: int, temperature: float, n: int,
                  logprobs: bool, top_logprobs: int) -> list[list[Completion]]:
        """``n`` completions per request (greedy when temperature is 0), in batches of ``batch_size``."""
        chats = [self._prepare(r) for r in requests]
        results: list[list[Completion]] = []
        with generation_lock(self.model):  # one thread at a time: see generation_lock
            for start in range(0, len(chats), self.batch_size):
                results.extend(self._generate_batch(chats[start:start + self.batch_size], max_new_tokens,
                                                    temperature, n, logprobs, top_logprobs))
        return results

    def _generate_batch(self, chats, max_new_tokens, temperature, n, logprobs, top_logprobs):
        import torch

        enc = self._encode(chats)
        sample = temperature > 0
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "do_sample": sample,
            "num_return_sequences": n if sample else 1,
            "return_dict_in_generate": True,
            "output_logits": bool(logprobs),
            "pad_token_id": self._pad_id,
        }
        if sample:
            kwargs.update(temperature=float(temperature), top_k=0, top_p=1.0)
        else:
            kwargs.update(temperature=None, top_k=None, top_p=None)
        kwargs.update(self.generate_kwargs)
        was_training = self.model.training  # a policy being trained may generate through us: restore its mode
        self.model.eval()
        try:
            with torch.inference_mode():
                out = self.model.generate(**enc, **kwargs)
        finally:
            if was_training:
                self.model.train()
        prompt_len = enc["input_ids"].shape[1]
        prompt_tokens = enc["attention_mask"].sum(dim=1).tolist()
        generated = out.sequences[:, prompt_len:].tolist()
        per_row = n if sample else 1
        logp = None
        if logprobs and out.logits:
            logp = torch.log_softmax(torch.stack(out.logits, dim=1).float(), dim=-1)  # [rows, T, V]
        completions: list[Completion] = []
        for row, ids in enumerate(generated):
            cut = next((t for t, tok in enumerate(ids) if tok in self._stop_ids), None)
            kept = ids if cut is None else ids[:cut]
            token_lps = None
            if logp is not None:
                token_lps = self._token_logprobs(logp[row], kept, top_logprobs)
            completions.append(Completion(
                text=self.tokenizer.decode(kept, skip_special_tokens=True),
                token_logprobs=token_lps,
                finish_reason="length" if cut is None else "stop",
                prompt_tokens=int(prompt_tokens[row // per_row]),
                completion_tokens=len(kept) + (0 if cut is None else 1),
            ))
        grouped = [completions[i * per_row:(i + 1) * per_row] for i in range(len(chats))]
        if not sample and n > 1:  # greedy decoding is deterministic: n copies of the one answer
            grouped = [[Completion(**vars(g[0])) for _ in range(n)] for g in grouped]
        return grouped

    def _token_logprobs(self, logp: Any, ids: list[int], top_k: int) -> list[TokenLogprob]:
        import torch

        if not ids:
            return []
        steps = logp[: len(ids)]
        chosen = steps.gather(1, torch.tensor(ids, device=steps.device).unsqueeze(1)).squeeze(1).tolist()
        top_vals = top_ids = None
        if top_k > 0:
            top_vals, top_ids = steps.topk(min(top_k, steps.shape[-1]), dim=-1)
            top_vals, top_ids = top_vals.tolist(), top_ids.tolist()
        decode = self._piece
        out = []
        for t, tok in enumerate(ids):
            table: dict[str, float] = {}
            if top_ids is not None:
                for i, v in zip(top_ids[t], top_vals[t], strict=True):
                    _add_logprob(table, decode(i), v)
            out.append(TokenLogprob(decode(tok), float(chosen[t]), table))
        return out


# --------------------------------------------------------------------------------------------------
# OpenAI-compatible HTTP servers
# --------------------------------------------------------------------------------------------------

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class OpenAIBackend(_CheckedBackend):
    """Generate through any OpenAI-compatible ``/v1/chat/completions`` server over HTTP (stdlib only).

    ``base_url`` includes the API prefix, e.g. ``http://127.0.0.1:8000/v1``. The API key is read from
    the environment variable ``api_key_env`` on every call (none sent when unset); it is never stored,
    logged or shown. ``timeout`` applies to each socket operation of a request; failures with 408/409/
    425/429/5xx, timeouts and connection errors are retried ``max_retries`` times with exponential
    backoff (honouring ``Retry-After``); at most ``concurrency`` requests are in flight at once.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_retries: int = 3,
        concurrency: int = 8,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        extra_body: Mapping[str, Any] | None = None,
    ):
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}")
        if not model:
            raise ValueError("model must be a non-empty model name")
        if timeout <= 0 or max_retries < 0 or concurrency < 1 or backoff_base < 0 or backoff_max < 0:
            raise ValueError("timeout and concurrency must be positive; max_retries and backoff times >= 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.concurrency = int(concurrency)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.extra_body = dict(extra_body or {})

    def __repr__(self) -> str:
        return (f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r}, "
                f"timeout={self.timeout}, max_retries={self.max_retries}, concurrency={self.concurrency})")

    __str__ = __repr__

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if key:
                headers["Authorization"] = "Bearer " + key
        return headers

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(self.backoff_max, max(0.0, float(retry_after)))
            except ValueError:
                pass
        delay = min(self.backoff_max, self.backoff_base * (2 ** attempt))
        return delay * (0.5 + random.random() / 2)

    def _request(self, method: str, path: str, payload: Mapping[str, Any] | None = None) -> Any:
        """One API call with retries; returns the decoded JSON body."""
        url = self.base_url + path
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        last: BackendError | None = None
        for attempt in range(self.max_retries + 1):
            retry_after = None
            req = urllib.request.Request(url, data=data, method=method, headers=self._headers())
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    body = resp.read()
                try:
                    return json.loads(body)
                except json.JSONDecodeError as exc:
                    raise BackendError(f"{method} {url}: the server's reply is not JSON ({body[:200]!r})") from exc
            except urllib.error.HTTPError as exc:
                detail = _error_detail(exc)
                message = f"{method} {url}: HTTP {exc.code}: {detail}"
                if exc.code not in _RETRY_STATUS:
                    raise BackendHTTPError(message, exc.code) from None
                last = BackendHTTPError(message, exc.code)
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
            except TimeoutError as exc:
                last = BackendTimeoutError(f"{method} {url}: no reply within {self.timeout:g} s ({exc})")
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                    last = BackendTimeoutError(f"{method} {url}: no reply within {self.timeout:g} s")
                else:
                    last = BackendConnectionError(f"{method} {url}: cannot connect ({exc.reason})")
            except (ConnectionError, http.client.HTTPException) as exc:
                last = BackendConnectionError(f"{method} {url}: connection failed ({type(exc).__name__}: {exc})")
            if attempt < self.max_retries:
                delay = self._backoff(attempt, retry_after)
                logger.warning("%s; retry %d of %d in %.2f s", last, attempt + 1, self.max_retries, delay)
                time.sleep(delay)
        assert last is not None
        raise type(last)(f"{last} (gave up after {self.max_retries + 1} attempts)",
                         *([last.status] if isinstance(last, BackendHTTPError) else []))

    def list_models(self) -> list[str]:
        """Names of the models the server offers (``GET /models``)."""
        body = self._request("GET", "/models")
        return [m.get("id") for m in body.get("data", []) if isinstance(m, Mapping)]

    def _one(self, messages: ChatRequest, max_new_tokens: int, temperature: float, n: int,
             logprobs: bool, top_logprobs: int) -> list[Completion]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": normalize_messages(messages, images="url"),
            "max_tokens": max_new_tokens,
            "temperature": temperature,
        }
        if logprobs:
            payload["logprobs"] = True
            if top_logprobs:
                payload["top_logprobs"] = top_logprobs
        payload.update(self.extra_body)
        got: list[Completion] = []
        while len(got) < n:  # some servers ignore n > 1: ask again for the rest
            payload["n"] = n - len(got)
            body = self._request("POST", "/chat/completions", payload)
            choices = body.get("choices") if isinstance(body, Mapping) else None
            if not choices:
                raise BackendError(f"POST {self.base_url}/chat/completions: reply has no choices: {str(body)[:200]}")
            usage = body.get("usage") or {}
            for choice in sorted(choices, key=lambda c: c.get("index", 0)):
                got.append(_completion_from_choice(choice, usage))
        return got[:n]

    def _generate(self, requests: list[ChatRequest], max_new_tokens: int, temperature: float, n: int,
                  logprobs: bool, top_logprobs: int) -> list[list[Completion]]:
        """Send each request to the server (``concurrency`` at a time); results are in request order."""
        if not requests:
            return []

        def call(messages: ChatRequest) -> list[Completion]:
            return self._one(messages, max_new_tokens, temperature, n, logprobs, top_logprobs)

        if len(requests) == 1 or self.concurrency == 1:
            return [call(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            return list(pool.map(call, requests))


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        raw = exc.read()[:2000]
    except Exception:
        return exc.reason or "no detail"
    try:
        body = json.loads(raw)
        err = body.get("error", body) if isinstance(body, Mapping) else body
        if isinstance(err, Mapping):
            return str(err.get("message") or err)[:500]
        return str(err)[:500]
    except (json.JSONDecodeError, UnicodeDecodeError):
        return raw.decode("utf-8", "replace")[:500] or str(exc.reason)


def _completion_from_choice(choice: Mapping[str, Any], usage: Mapping[str, Any]) -> Completion:
    message = choice.get("message") or {}
    content = message.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    token_lps = None
    lp = choice.get("logprobs")
    if isinstance(lp, Mapping) and isinstance(lp.get("content"), list):
        token_lps = []
        for entry in lp["content"]:
            table: dict[str, float] = {}
            for alt in entry.get("top_logprobs") or []:
                _add_logprob(table, alt["token"], float(alt["logprob"]))
            token_lps.append(TokenLogprob(entry["token"], float(entry["logprob"]), table))
    return Completion(
        text=content or "",
        token_logprobs=token_lps,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
    )


# --------------------------------------------------------------------------------------------------
# vLLM (GPU machines)
# --------------------------------------------------------------------------------------------------


class VLLMBackend(_CheckedBackend):
    """Generate with an in-process vLLM engine (``vllm.LLM.chat``); needs ``pip install coach-reward[vllm]``.

    ``model`` is a model path or name; ``llm_kwargs`` go to ``vllm.LLM`` (e.g. ``gpu_memory_utilization``,
    ``max_model_len``, ``limit_mm_per_prompt``). Pass ``llm=`` to reuse an engine built elsewhere.
    """

    def __init__(self, model: str | None = None, *, llm: Any = None, **llm_kwargs: Any):
        try:
            import vllm
        except ImportError as exc:
            raise ImportError(
                "VLLMBackend needs the vllm package, which is not installed: pip install coach-reward[vllm] "
                "(a GPU machine; TRL 1.16 supports vLLM 0.22-0.31). On CPU use TransformersBackend."
            ) from exc
        if llm is None and not model:
            raise ValueError("give a model path/name or an existing vllm.LLM as llm=")
        self._vllm = vllm
        self.llm = llm if llm is not None else vllm.LLM(model=model, **llm_kwargs)
        self.model = model

    def __repr__(self) -> str:
        return f"VLLMBackend(model={self.model!r})"

    def _generate(self, requests: list[ChatRequest], max_new_tokens: int, temperature: float, n: int,
                  logprobs: bool, top_logprobs: int) -> list[list[Completion]]:
        """``n`` completions per request with one batched ``LLM.chat`` call."""
        chats = [normalize_messages(r, images="url") for r in requests]
        if not chats:
            return []
        params = self._vllm.SamplingParams(
            n=n, temperature=float(temperature), max_tokens=max_new_tokens,
            logprobs=(max(top_logprobs, 1) if logprobs else None),
        )
        with generation_lock(self.llm):  # vLLM's offline engine serves one caller at a time
            outputs = self.llm.chat(chats, sampling_params=params, use_tqdm=False)
        results = []
        for out in outputs:
            group = []
            for c in out.outputs:
                token_lps = None
                if logprobs and c.logprobs is not None:
                    token_lps = []
                    for tok_id, alts in zip(c.token_ids, c.logprobs, strict=False):
                        table: dict[str, float] = {}
                        ranked = sorted(alts.items(), key=lambda kv: kv[1].logprob, reverse=True)[:top_logprobs]
                        for _, lp in ranked:
                            _add_logprob(table, lp.decoded_token or "", lp.logprob)
                        chosen = alts[tok_id]
                        token_lps.append(TokenLogprob(chosen.decoded_token or "", chosen.logprob, table))
                group.append(Completion(
                    text=c.text, token_logprobs=token_lps, finish_reason=c.finish_reason,
                    prompt_tokens=len(out.prompt_token_ids or []), completion_tokens=len(c.token_ids),
                ))
            results.append(group)
        return results
