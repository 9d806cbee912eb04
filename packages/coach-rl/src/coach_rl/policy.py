"""The policy: turn observations into prompts, generate replies in batches, and read them back as actions.

Everything that acts in an env goes through one small protocol, :class:`Policy`:
``act(requests, greedy=False) -> list[PolicyOutput]``, one output per :class:`PolicyRequest` (the task, the
screen, the history so far). An output always comes back: a reply that does not parse gives
``action=None`` and the reason in ``error``, never an exception, so a rollout never dies of model text.

:class:`PolicyFormat` is the policy's input/output contract without a model: which screen view the
prompt shows (``mode``: compressed UI text, screenshot or both), which answer format it asks for
(``action_format``: UI-TARS calls with coordinates, or the compact "index" format naming numbered UI
elements in AndroidWorld JSON) and how a reply is read. :class:`HFPolicy` wraps a Hugging Face model
with one (batched ``generate`` with left padding, CPU or GPU); demonstrations and trainers use the same
``PolicyFormat`` so that every state is shown to the model exactly as it was during rollouts.
:class:`VLLMPolicy` does the same on vLLM (GPU machines).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import torch

from android_gym.actions import Action, ActionParseError
from android_gym.actions.format import format_action
from android_gym.trajectory import Step
from coach_reward.prompts import to_pil_image
from coach_rl.nonfinite import NonFiniteLogits
from coach_rl.prompting import (
    POLICY_MODES,
    build_index_policy_messages,
    build_policy_messages,
    format_index_action,
    index_target,
    parse_index_output,
    parse_policy_output,
)

__all__ = [
    "ACTION_FORMATS",
    "HFPolicy",
    "Policy",
    "PolicyFormat",
    "PolicyOutput",
    "PolicyRequest",
    "VLLMPolicy",
    "json_safe_messages",
    "stored_prompt",
]

NONFINITE_SAMPLE_ERROR = ("the model's logits were NaN/inf while generating this reply (its sampling was stopped "
                          "there); counted in nonfinite/generate")
"""``PolicyOutput.error`` of a sample whose generation hit non-finite logits."""

ACTION_FORMATS: tuple[str, ...] = ("uitars", "index")
"""Answer formats: UI-TARS calls with coordinates, or AndroidWorld JSON naming numbered UI elements."""


@dataclass
class PolicyRequest:
    """What the policy is asked about at one step.

    ``ui`` is the compressed UI text (``obs["ui"]``), ``elements`` the parsed UI elements
    (``obs["elements"]``; the index format needs them), ``screenshot`` an HxWx3 array or PIL image (or
    None), ``history`` the earlier steps of this episode (oldest first) and ``screen_size`` the device's
    (width, height) in pixels, used to read and clamp coordinates.
    """

    instruction: str
    ui: str | None = None
    elements: Sequence[Any] | None = None
    screenshot: Any = None
    history: list[Step] = field(default_factory=list)
    screen_size: tuple[int, int] | None = None

    @classmethod
    def from_observation(
        cls,
        observation: Mapping[str, Any],
        history: Sequence[Step] = (),
        screen_size: tuple[int, int] | None = None,
    ) -> PolicyRequest:
        """The request for an ``AndroidEnv`` observation (``reset``/``step`` return it): all a policy reads."""
        return cls(
            instruction=observation["instruction"],
            ui=observation.get("ui"),
            elements=observation.get("elements"),
            screenshot=observation.get("screenshot"),
            history=list(history),
            screen_size=screen_size,
        )


@dataclass
class PolicyOutput:
    """One reply: the raw ``text``, the parsed ``action`` (None when it did not parse; ``error`` says why),
    the ``thought``, the chat ``prompt`` messages and the templated ``prompt_text`` the model saw.

    ``target`` describes the element an index-format answer names (``TextView 'Display'``), kept so
    later prompts can say what an earlier index pointed at; ``num_tokens`` counts generated tokens (EOS
    included) and ``token_ids`` are those tokens (re-tokenising ``text`` need not give them back);
    ``token_logprobs`` are their log-probabilities when the policy records them.
    """

    text: str
    action: Action | None
    error: str | None
    thought: str
    prompt: list[dict[str, Any]]
    prompt_text: str
    target: str | None = None
    num_tokens: int = 0
    token_ids: list[int] | None = None
    token_logprobs: list[float] | None = None


@runtime_checkable
class Policy(Protocol):
    """Anything that answers :class:`PolicyRequest` batches; ``version`` counts its updates (for replay)."""

    version: int

    def act(self, requests: Sequence[PolicyRequest], *, greedy: bool = False) -> list[PolicyOutput]:
        """One output per request, in order; never raises for malformed model output."""
        ...


def _check_int(value: Any, name: str, minimum: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be {'None or ' if allow_none else ''}an integer >= {minimum}, got {value!r}")


@dataclass
class PolicyFormat:
    """How states become prompts and replies become actions, independent of any model.

    Args:
        mode: what the prompt shows of the screen: "xml" (compressed UI text; the element list in the
            index format), "screenshot" or "both".
        action_format: "uitars" (``Thought: ... Action: click(start_box='(x,y)')``) or "index"
            (``{"action_type": "click", "index": 3}`` over numbered elements).
        max_history: show only the last N earlier steps (None: all, as in the paper).
        history_style: UI-TARS format only: "inline" or "turns" (see ``build_policy_messages``).
        coordinates: UI-TARS format only: the frame the model's coordinates are in ("auto"/"absolute":
            screen pixels, "relative1000", "smart_resize" for UI-TARS-1.5 / Qwen2.5-VL).
        min_pixels, max_pixels: ``smart_resize`` settings of the model's image processor.
        language: the language the UI-TARS thought is written in.
        max_elements, max_label_chars: index format only: caps on the element list.
        action_space: the action lines the prompt lists (None: the format's own,
            ``UITARS_MOBILE_ACTION_SPACE`` or ``INDEX_ACTION_SPACE``; index format: empty leaves the list out,
            which suits tiny models trained on the format from scratch).
        system_prompt: an optional system message.
    """

    mode: str = "xml"
    action_format: str = "uitars"
    max_history: int | None = None
    history_style: str = "inline"
    coordinates: str = "auto"
    min_pixels: int | None = None
    max_pixels: int | None = None
    language: str = "English"
    max_elements: int | None = None
    max_label_chars: int = 60
    action_space: tuple[str, ...] | None = None
    system_prompt: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in POLICY_MODES:
            raise ValueError(f"mode must be one of {POLICY_MODES}, got {self.mode!r}")
        if self.action_format not in ACTION_FORMATS:
            raise ValueError(f"action_format must be one of {ACTION_FORMATS}, got {self.action_format!r}")
        _check_int(self.max_history, "max_history", 0, allow_none=True)
        _check_int(self.max_elements, "max_elements", 1, allow_none=True)
        _check_int(self.max_label_chars, "max_label_chars", 1)
        if self.action_space is not None:
            if isinstance(self.action_space, str) or not all(isinstance(x, str) for x in self.action_space):
                raise TypeError("action_space must be a sequence of strings, one action per line")
            self.action_space = tuple(self.action_space)
        parse_policy_output("", (1080, 2400), **self._coordinate_options())  # rejects bad coordinate options now

    def _coordinate_options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"coordinates": self.coordinates}
        if self.min_pixels is not None:
            opts["min_pixels"] = self.min_pixels
        if self.max_pixels is not None:
            opts["max_pixels"] = self.max_pixels
        return opts

    def _check_request(self, request: PolicyRequest) -> None:
        if not isinstance(request, PolicyRequest):
            raise TypeError(f"requests must be PolicyRequest objects, got {type(request).__name__}")
        if self.action_format == "index" and request.elements is None:
            raise ValueError("the index action format needs request.elements (the env's obs['elements'])")
        if self.action_format == "uitars" and self.mode in ("xml", "both") and not isinstance(request.ui, str):
            raise ValueError(f"mode={self.mode!r} needs request.ui (the compressed UI text, obs['ui'])")
        if self.mode != "xml" and request.screenshot is None:
            raise ValueError(f"mode={self.mode!r} needs request.screenshot: make the env with screenshot=True")

    def messages(
        self,
        request: PolicyRequest,
        *,
        max_history: int | None = None,
        ui_chars: int | None = None,
        max_elements: int | None = None,
    ) -> list[dict[str, Any]]:
        """The chat messages for ``request``; the keyword caps shorten the prompt further (for token budgets)."""
        self._check_request(request)
        history = request.history
        cap = self.max_history if max_history is None else (
            max_history if self.max_history is None else min(max_history, self.max_history))
        shot = request.screenshot if self.mode != "xml" else None
        if self.action_format == "index":
            elements_cap = self.max_elements if max_elements is None else (
                max_elements if self.max_elements is None else min(max_elements, self.max_elements))
            return build_index_policy_messages(
                request.instruction, request.elements or (), history, screenshot=shot, mode=self.mode,
                max_history=cap, max_elements=elements_cap, max_label_chars=self.max_label_chars,
                system_prompt=self.system_prompt,
                **({"action_space": self.action_space} if self.action_space is not None else {}))
        ui = request.ui if self.mode != "screenshot" else None
        if ui is not None and ui_chars is not None and len(ui) > ui_chars:
            ui = ui[:ui_chars] + "\n...(screen text cut to fit the prompt)"
        action_format = {"screen_size": request.screen_size, **self._coordinate_options()} \
            if request.screen_size is not None else None
        return build_policy_messages(
            request.instruction, ui, shot, history, mode=self.mode, max_history=cap, language=self.language,
            history_style=self.history_style, action_format=action_format, system_prompt=self.system_prompt,
            **({"action_space": self.action_space} if self.action_space is not None else {}))

    def fitted_messages(
        self, request: PolicyRequest, count_tokens: Callable[[list[dict[str, Any]]], int], max_tokens: int
    ) -> list[dict[str, Any]]:
        """The messages with the longest history (oldest steps dropped first) whose prompt is within ``max_tokens``.

        When even no history is too long, the screen is shortened too (fewer elements in the index format,
        less UI text otherwise). When nothing fits, the shortest prompt is returned: generation still runs.
        """
        n_history = len(request.history) if self.max_history is None else min(self.max_history, len(request.history))

        def fits(messages: list[dict[str, Any]]) -> bool:
            return count_tokens(messages) <= max_tokens

        best = self.messages(request, max_history=n_history)
        if fits(best):
            return best
        low, high = 0, n_history - 1
        best = self.messages(request, max_history=0)
        if fits(best):
            while low < high:  # the longest history in [0, n_history) that fits; token counts grow with it
                mid = (low + high + 1) // 2
                candidate = self.messages(request, max_history=mid)
                if fits(candidate):
                    low, best = mid, candidate
                else:
                    high = mid - 1
            return best
        if self.action_format == "index":
            size = len(request.elements or ())
            make = lambda n: self.messages(request, max_history=0, max_elements=max(1, n))  # noqa: E731
        else:
            size = len(request.ui or "")
            make = lambda n: self.messages(request, max_history=0, ui_chars=n)  # noqa: E731
        low, high = 0, size
        best = make(0)
        while low < high:
            mid = (low + high + 1) // 2
            candidate = make(mid)
            if fits(candidate):
                low, best = mid, candidate
            else:
                high = mid - 1
        return best

    def parse(self, text: str, request: PolicyRequest) -> tuple[str, Action | ActionParseError]:
        """``(thought, action)`` of a reply to ``request``; an ``ActionParseError`` in place of a malformed action."""
        if self.action_format == "index":
            return parse_index_output(text, request.elements, request.screen_size)
        if self.coordinates in ("relative1000", "smart_resize") and request.screen_size is None:
            return "", ActionParseError(f"coordinates={self.coordinates!r} need request.screen_size to read a reply")
        return parse_policy_output(text, request.screen_size, **self._coordinate_options())

    def target(self, text: str, request: PolicyRequest) -> str | None:
        """What element an index-format reply names (None for UI-TARS replies and replies without an index)."""
        if self.action_format != "index":
            return None
        return index_target(text, request.elements)

    def answer_for(self, action: Action, request: PolicyRequest, *, type_presses_enter: bool = False) -> str:
        """``action`` written as this format's answer (for demonstrations): index JSON or a UI-TARS ``Action:`` line.

        Raises ``android_gym.ActionFormatError`` when the format cannot express the action (see
        :func:`coach_rl.prompting.format_index_action` for ``type_presses_enter``).
        """
        if self.action_format == "index":
            return format_index_action(action, request.elements or (), screen_size=request.screen_size,
                                       type_presses_enter=type_presses_enter)
        return format_action(action, "uitars", screen_size=request.screen_size, **self._coordinate_options())


def json_safe_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A copy of chat messages with image parts reduced to bare ``{"type": "image"}`` placeholders.

    That is the form TRL dataset rows and the replay buffer keep (the image itself travels separately).
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            out.append({"role": message["role"], "content": content})
        else:
            parts = [{"type": "image"} if p.get("type") in ("image", "image_url") else dict(p) for p in content]
            out.append({"role": message["role"], "content": parts})
    return out


def stored_prompt(prompt: Sequence[Mapping[str, Any]] | None, screenshot: Any = None, *,
                  with_image: bool = True) -> list[dict[str, Any]]:
    """The chat messages a policy was given for a collected step, from its recorded ``prompt``.

    ``prompt`` is the JSON-safe form the collector keeps (images as bare placeholders): a
    :class:`coach_rl.records.PolicyTurn`'s, a :class:`coach_rl.records.StepRecord`'s or a replay
    ``ReplayStep``'s ``prompt``. With ``with_image`` the step's ``screenshot`` (array or PNG bytes) is put back
    into the image parts, the form a VLM processor and TRL's trainers read. Raises ``ValueError`` for an empty
    prompt (a step not collected by the collector).
    """
    if not isinstance(prompt, Sequence) or isinstance(prompt, (str, bytes)) or not prompt:
        raise ValueError("this step has no stored prompt: it was not collected by coach_rl.rollout.RolloutCollector")
    messages = []
    for message in prompt:
        content = message["content"]
        if not isinstance(content, str) and with_image:
            if any(p.get("type") == "image" for p in content) and screenshot is None:
                raise ValueError("the stored prompt shows a screenshot but the step kept none (load it with_screenshots)")
            content = [{"type": "image", "image": to_pil_image(screenshot)} if p.get("type") == "image" else dict(p)
                       for p in content]
        messages.append({"role": message["role"], "content": content})
    return messages


def _has_image(messages: Sequence[Mapping[str, Any]]) -> list[Any]:
    images = []
    for message in messages:
        content = message["content"]
        if not isinstance(content, str):
            images += [p["image"] for p in content if p.get("type") == "image" and p.get("image") is not None]
    return images


class HFPolicy:
    """A Hugging Face causal LM (or vision-language model with its processor) as a :class:`Policy`.

    Generation is batched with left padding (``batch_size`` prompts per ``generate`` call), sampled
    with ``temperature``/``top_p`` (no top-k cut) or greedy. The model is switched to eval mode while
    generating and back afterwards, so a trainer may hold the same object. ``max_prompt_tokens`` keeps
    prompts within a token budget by dropping the oldest history (then shortening the screen).
    ``record_logprobs`` stores each generated token's log-probability under the sampling temperature
    (the quantity TRL's GRPO computes), for PPO-style updates. ``version`` counts policy updates; the
    training loop increments it after each actor update.

    Timing counters (``generate_calls``, ``generated_tokens``, ``generate_seconds``) accumulate over
    the policy's life.
    """

    def __init__(
        self,
        model: Any,
        processing_class: Any,
        *,
        mode: str = "xml",
        action_format: str = "uitars",
        max_new_tokens: int = 128,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_history: int | None = None,
        max_prompt_tokens: int | None = None,
        coordinates: str = "auto",
        batch_size: int = 16,
        history_style: str = "inline",
        record_logprobs: bool = False,
        format: PolicyFormat | None = None,
        version: int = 0,
    ) -> None:
        """Wrap ``model`` and its tokenizer (text models) or processor (VLMs); see the class docstring."""
        _check_int(max_new_tokens, "max_new_tokens", 1)
        _check_int(batch_size, "batch_size", 1)
        _check_int(max_prompt_tokens, "max_prompt_tokens", 1, allow_none=True)
        if not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or not temperature > 0:
            raise ValueError(f"temperature must be > 0 (use greedy=True for argmax decoding), got {temperature!r}")
        if not isinstance(top_p, (int, float)) or isinstance(top_p, bool) or not 0 < top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
        if not hasattr(model, "generate"):
            raise TypeError(f"model must be a Hugging Face generation model, got {type(model).__name__}")
        self.model = model
        self.processing_class = processing_class
        self.tokenizer = getattr(processing_class, "tokenizer", processing_class)
        if not callable(getattr(self.tokenizer, "apply_chat_template", None)):
            raise TypeError("processing_class must be a tokenizer or processor with a chat template")
        if getattr(self.tokenizer, "chat_template", None) is None and getattr(processing_class, "chat_template",
                                                                               None) is None:
            raise ValueError("the tokenizer has no chat template; set tokenizer.chat_template first")
        self.is_multimodal = processing_class is not self.tokenizer
        self.format = format or PolicyFormat(mode=mode, action_format=action_format, max_history=max_history,
                                             history_style=history_style, coordinates=coordinates)
        if self.format.mode != "xml" and not self.is_multimodal:
            raise ValueError(f"mode={self.format.mode!r} shows screenshots: pass a VLM processor, not a tokenizer")
        self.max_new_tokens = max_new_tokens
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.max_prompt_tokens = max_prompt_tokens
        self.batch_size = batch_size
        self.record_logprobs = bool(record_logprobs)
        self.version = int(version)
        self.generate_calls = 0
        self.generated_tokens = 0
        self.generate_seconds = 0.0
        self.nonfinite_samples = 0
        """Samples whose logits were NaN/inf (ended early, marked failed: ``error`` says so), over the policy's life."""
        self.last_nonfinite_rows: list[int] = []
        """Rows of the last ``generate`` call that hit non-finite logits."""
        self.nonfinite: Any = None
        """The :class:`coach_rl.nonfinite.NonFiniteMonitor` counting them (the training loop shares its own)."""
        pad = self.tokenizer.pad_token_id
        self._pad_id = pad if pad is not None else self.tokenizer.eos_token_id
        if self._pad_id is None:
            raise ValueError("the tokenizer has neither a pad token nor an EOS token to pad batches with")

    def __repr__(self) -> str:
        return (f"HFPolicy({type(self.model).__name__}, mode={self.format.mode!r}, "
                f"action_format={self.format.action_format!r}, version={self.version})")

    # -- prompts ----------------------------------------------------------------------------------------

    def _template(self, messages: list[dict[str, Any]]) -> str:
        return self.processing_class.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def count_prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        """Tokens of the templated prompt (text tokens; an image counts as its placeholder tokens)."""
        return len(self.tokenizer(self._template(messages), add_special_tokens=False)["input_ids"])

    def messages_for(self, request: PolicyRequest) -> list[dict[str, Any]]:
        """The chat messages the model is given for ``request`` (the same ones trainers must use)."""
        if self.max_prompt_tokens is None:
            return self.format.messages(request)
        return self.format.fitted_messages(request, self.count_prompt_tokens, self.max_prompt_tokens)

    def prompt_text_for(self, request: PolicyRequest) -> str:
        """The templated prompt string (generation prompt included) the model is given for ``request``."""
        return self._template(self.messages_for(request))

    # -- acting -----------------------------------------------------------------------------------------

    def act(self, requests: Sequence[PolicyRequest], *, greedy: bool = False) -> list[PolicyOutput]:
        """Generate one reply per request (batches of ``batch_size``) and parse it; never raises on model text."""
        requests = list(requests)
        prompts = [self.messages_for(r) for r in requests]
        texts = [self._template(m) for m in prompts]
        outputs: list[PolicyOutput] = []
        for start in range(0, len(requests), self.batch_size):
            stop = start + self.batch_size
            generated = self._generate(prompts[start:stop], texts[start:stop], greedy)
            flagged = set(self.last_nonfinite_rows)
            self._count_nonfinite(requests[start:stop], flagged)
            for row, (request, messages, text, (reply, ids, logprobs)) in enumerate(zip(
                    requests[start:stop], prompts[start:stop], texts[start:stop], generated)):
                thought, action = self.format.parse(reply, request)
                error = str(action) if isinstance(action, ActionParseError) else None
                if row in flagged:  # the model's logits were NaN/inf: a failed sample, never an action
                    error, logprobs = NONFINITE_SAMPLE_ERROR, None
                outputs.append(PolicyOutput(
                    text=reply, action=None if error else action, error=error, thought=thought,
                    prompt=json_safe_messages(messages), prompt_text=text,
                    target=self.format.target(reply, request), num_tokens=len(ids), token_ids=ids,
                    token_logprobs=logprobs))
        return outputs

    def _count_nonfinite(self, requests: Sequence[PolicyRequest], flagged: set[int]) -> None:
        """Count the samples of one ``generate`` call that hit non-finite logits; a whole failed call is a streak step."""
        from coach_rl.nonfinite import monitor_of

        monitor = monitor_of(self)
        if not flagged:
            monitor.ok("generate")
            return
        first = requests[min(flagged)]
        monitor.bad("generate", f"task {first.instruction!r}", f"{len(flagged)} of {len(requests)} samples had NaN/inf "
                    "logits (marked failed)", count=len(flagged), streak=len(flagged) == len(requests))

    def _encode(self, prompts: list[list[dict[str, Any]]], texts: list[str]) -> Any:
        if not self.is_multimodal:
            return self.tokenizer(texts, return_tensors="pt", padding=True, padding_side="left",
                                  add_special_tokens=False)
        images = [_has_image(m) for m in prompts]
        kwargs: dict[str, Any] = {}
        if any(images):
            if not all(images):
                raise ValueError("every prompt of a batch must show a screenshot, or none")
            kwargs["images"] = [[to_pil_image(i) for i in imgs] for imgs in images]
        return self.processing_class(text=texts, return_tensors="pt", padding=True, padding_side="left", **kwargs)

    @torch.no_grad()
    def _generate(self, prompts: list[list[dict[str, Any]]], texts: list[str],
                  greedy: bool) -> list[tuple[str, list[int], list[float] | None]]:
        started = time.perf_counter()
        batch = self._encode(prompts, texts)
        device = next(self.model.parameters()).device
        batch = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
        options: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "pad_token_id": self._pad_id,
                                   "return_dict_in_generate": True, "output_logits": self.record_logprobs}
        if greedy:
            options.update(do_sample=False)
        else:
            options.update(do_sample=True, temperature=self.temperature, top_p=self.top_p, top_k=0)
        from transformers import LogitsProcessorList

        guard = NonFiniteLogits(sorted(self._eos_ids()) or self._pad_id)
        options["logits_processor"] = LogitsProcessorList([guard])
        was_training = self.model.training
        self.model.eval()
        try:
            out = self.model.generate(**batch, **options)
        finally:
            self.model.train(was_training)
        self.last_nonfinite_rows = guard.rows()
        self.nonfinite_samples += len(self.last_nonfinite_rows)
        prompt_len = batch["input_ids"].shape[1]
        new = out.sequences[:, prompt_len:]
        eos = self._eos_ids()
        logprobs = None
        if self.record_logprobs and out.logits:
            logits = torch.stack(out.logits, dim=1).float()
            if not greedy:
                logits = logits / self.temperature
            logprobs = torch.log_softmax(logits, dim=-1).gather(-1, new[:, : logits.shape[1], None]).squeeze(-1)
            logprobs = torch.nan_to_num(logprobs, nan=0.0)  # flagged rows: their log-probs are dropped in act()
        results = []
        for row in range(new.shape[0]):
            ids = new[row].tolist()
            length = len(ids)
            for i, token in enumerate(ids):
                if token in eos:
                    length = i + 1
                    break
            text = self.tokenizer.decode(ids[:length], skip_special_tokens=True)
            row_lp = logprobs[row, :length].tolist() if logprobs is not None else None
            results.append((text, ids[:length], row_lp))
            self.generated_tokens += length
        self.generate_calls += 1
        self.generate_seconds += time.perf_counter() - started
        return results

    def _eos_ids(self) -> set[int]:
        eos = getattr(self.model.generation_config, "eos_token_id", None)
        if eos is None:
            eos = self.tokenizer.eos_token_id
        ids = set(eos) if isinstance(eos, (list, tuple)) else ({eos} if eos is not None else set())
        return ids


class VLLMPolicy:
    """A :class:`Policy` generating with vLLM (CUDA machines); prompts and parsing as in :class:`HFPolicy`.

    ``model`` is a model path/name or a ``vllm.LLM``; ``llm_kwargs`` go to ``vllm.LLM``. Without vLLM
    installed, construction raises ``ImportError`` naming the extra to install.
    """

    def __init__(
        self,
        model: Any,
        *,
        format: PolicyFormat | None = None,
        mode: str = "xml",
        action_format: str = "uitars",
        max_new_tokens: int = 128,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_history: int | None = None,
        coordinates: str = "auto",
        record_logprobs: bool = False,
        llm_kwargs: Mapping[str, Any] | None = None,
        version: int = 0,
    ) -> None:
        """Load ``model`` into vLLM (or take a ready ``vllm.LLM``); see the class docstring."""
        try:
            import vllm
        except ImportError as err:
            raise ImportError(
                "VLLMPolicy needs vLLM, which is not installed: `pip install 'coach-rl[vllm]'` on a CUDA machine "
                "(TRL 1.16 supports vLLM 0.22-0.31); on CPU use HFPolicy"
            ) from err
        _check_int(max_new_tokens, "max_new_tokens", 1)
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0 (use greedy=True for argmax decoding), got {temperature!r}")
        self._vllm = vllm
        self.llm = model if isinstance(model, vllm.LLM) else vllm.LLM(model=model, **dict(llm_kwargs or {}))
        self.tokenizer = self.llm.get_tokenizer()
        self.format = format or PolicyFormat(mode=mode, action_format=action_format, max_history=max_history,
                                             coordinates=coordinates)
        self.max_new_tokens = max_new_tokens
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.record_logprobs = bool(record_logprobs)
        self.version = int(version)

    def messages_for(self, request: PolicyRequest) -> list[dict[str, Any]]:
        """The chat messages the model is given for ``request``."""
        return self.format.messages(request)

    def prompt_text_for(self, request: PolicyRequest) -> str:
        """The templated prompt string the model is given for ``request``."""
        return self.tokenizer.apply_chat_template(self.messages_for(request), tokenize=False,
                                                  add_generation_prompt=True)

    def act(self, requests: Sequence[PolicyRequest], *, greedy: bool = False) -> list[PolicyOutput]:
        """Generate one reply per request in one vLLM call and parse it; never raises on model text."""
        requests = list(requests)
        prompts = [self.messages_for(r) for r in requests]
        texts = [self.tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in prompts]
        inputs: list[Any] = []
        for messages, text in zip(prompts, texts):
            images = _has_image(messages)
            inputs.append({"prompt": text, "multi_modal_data": {"image": [to_pil_image(i) for i in images]}}
                          if images else text)
        params = self._vllm.SamplingParams(
            temperature=0.0 if greedy else self.temperature, top_p=1.0 if greedy else self.top_p,
            max_tokens=self.max_new_tokens, logprobs=0 if self.record_logprobs else None)
        results = self.llm.generate(inputs, params, use_tqdm=False)
        outputs = []
        for request, messages, text, result in zip(requests, prompts, texts, results):
            completion = result.outputs[0]
            thought, action = self.format.parse(completion.text, request)
            error = str(action) if isinstance(action, ActionParseError) else None
            logprobs = None
            if self.record_logprobs and completion.logprobs is not None:
                logprobs = [entry[token].logprob for token, entry in zip(completion.token_ids, completion.logprobs)]
            outputs.append(PolicyOutput(
                text=completion.text, action=None if error else action, error=error, thought=thought,
                prompt=json_safe_messages(messages), prompt_text=text, target=self.format.target(completion.text, request),
                num_tokens=len(completion.token_ids), token_ids=list(completion.token_ids), token_logprobs=logprobs))
        return outputs
