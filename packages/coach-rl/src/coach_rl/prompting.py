"""The policy's prompt: instruction, action space, history and current screen as chat messages, and reading the reply.

The structure follows the Android Coach policy prompt (paper, Figure 8, itself UI-TARS-1.5's mobile prompt),
in our own words: the agent's role, the output format ``Thought: ...`` / ``Action: ...``, the mobile action
space in UI-TARS call syntax, notes (language of the thought, what it should contain), the user's
instruction, the interaction history and the current screen. The paper gives the policy the complete
history; ``max_history`` keeps only the last N steps when prompts must be shorter.

The screen is a screenshot (``mode="screenshot"``, a ``{"type": "image"}`` content part), the compressed UI
text for text-only policies (``mode="xml"``) or both. Two history layouts:

* ``history_style="inline"`` (default, the paper's Figure 8): one user message holding everything, the
  history as numbered ``Thought``/``Action`` entries.
* ``history_style="turns"`` (UI-TARS's training conversations): the prompt as the first user message,
  each earlier step as an assistant message with its ``Thought``/``Action`` text, optionally preceded by
  that step's screen for the last ``history_observations`` steps, then the current screen as the last
  user message.

Untrusted text (the instruction, what the screen shows, earlier model outputs) cannot change the message
structure: it only ever lands inside a message's text, and :func:`sanitize_policy_text` first removes
control and invisible format characters and defuses chat-template tokens written as text
(``<|im_end|>``, ``<|image_pad|>``, ``</s>``, ...), which a tokenizer would otherwise read as real turn
boundaries or image slots. UI-TARS's ``<|box_start|>``/``<|box_end|>`` markers are kept. The brackets
``⟦`` ``⟧`` that mark roles in :func:`render_messages_text` become plain ``[`` ``]``.

A second, compact answer format suits small text policies: the **index format**
(:func:`build_index_policy_messages`). The screen is a numbered list of its UI elements
(:func:`render_indexed_elements`, e.g. ``[3] Switch 'Wi-Fi' checked click``) and the model answers one
AndroidWorld-style JSON action naming an element by its number (``{"action_type": "click", "index": 3}``),
which ``android_gym.parse_action(style="androidworld", elements=...)`` resolves to screen pixels
(:func:`parse_index_output`); :func:`format_index_action` writes a typed action in that form (for
demonstrations). As in AndroidWorld, ``input_text`` taps its element, types and presses Enter.
"""

from __future__ import annotations

import dataclasses
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from android_gym.actions import Action, ActionParseError, Type
from android_gym.actions.coords import FACTOR, MAX_PIXELS, MIN_PIXELS, coordinate_space
from android_gym.actions.format import ActionFormatError, format_action
from android_gym.actions.parse import parse_action
from android_gym.trajectory import Step
from coach_reward.prm_data.samplers import split_thought_action
from coach_reward.prompts import to_pil_image

__all__ = [
    "HISTORY_STYLES",
    "INDEX_ACTION_SPACE",
    "POLICY_MODES",
    "UITARS_MOBILE_ACTION_SPACE",
    "build_index_policy_messages",
    "build_policy_messages",
    "fit_policy_messages",
    "format_index_action",
    "history_entry",
    "index_target",
    "parse_index_output",
    "parse_policy_output",
    "render_indexed_elements",
    "render_messages_text",
    "sanitize_policy_text",
    "screen_index_target",
    "split_thought_action",
]

POLICY_MODES: tuple[str, ...] = ("xml", "screenshot", "both")
"""What the policy sees of the current screen: compressed UI text, the screenshot, or both."""
HISTORY_STYLES: tuple[str, ...] = ("inline", "turns")
"""How earlier steps are laid out: inside the one user message, or as assistant turns."""

UITARS_MOBILE_ACTION_SPACE: tuple[str, ...] = (
    "click(start_box='<|box_start|>(x1,y1)<|box_end|>')",
    "long_press(start_box='<|box_start|>(x1,y1)<|box_end|>')",
    "type(content='')  # types into the focused field; end the content with \\n to submit it",
    "scroll(start_box='<|box_start|>(x1,y1)<|box_end|>', direction='down or up or right or left')",
    "drag(start_box='<|box_start|>(x1,y1)<|box_end|>', end_box='<|box_start|>(x2,y2)<|box_end|>')",
    "open_app(app_name='')",
    "press_home()",
    "press_back()",
    "press_enter()",
    "wait()  # lets the screen settle",
    "finished(content='')  # ends the task, done or not; for a question, content is the answer",
)
"""The mobile actions in UI-TARS call syntax (the paper's Table 6 operations), one line each."""

_ROLE_TEXT = (
    "You operate an Android phone for a user. You are shown the user's task, what you have done so far "
    "and the current screen. Reply with the single next action that moves the task forward."
)

_OUTPUT_FORMAT = "Thought: ...\nAction: ..."

_COORDINATE_NOTES = {
    "xml": "Coordinates (x, y) are screen pixels, as in the element bounds [left,top][right,bottom] of the screen text.",
    "screenshot": "Coordinates (x, y) are pixels of the screenshot you are shown.",
    "both": "Coordinates (x, y) are pixels of the screenshot you are shown.",
}

# Chat-structure tokens written as text: ChatML/Qwen ``<|im_end|>``, ``<|image_pad|>``, Llama-3 ``<|eot_id|>``,
# Phi ``<|end|>``... (all ``<|...|>`` except UI-TARS box markers), sentence tags ``<s>``/``</s>``, Gemma's turn
# tags and Mistral's ``[INST]``.
_PIPE_TOKEN = re.compile(r"<\|(?!box_start\|>|box_end\|>)([^<>|\n]{0,60})\|>")
_SENTENCE_TAG = re.compile(r"<(/?s)>", re.IGNORECASE)
_TURN_TAG = re.compile(r"<(/?(?:start_of_turn|end_of_turn|bos|eos|pad|unk|image|img|video))>", re.IGNORECASE)
_INST_TAG = re.compile(r"\[(/?INST)\]")
_KEEP_CONTROL = {"\n", "\t"}
_LOOKALIKE = {"<": "\u2039", "[": "\u27ee", "{": "\u2774", "(": "\u2768"}

HistoryItem = Step | tuple[str, Action | str | None] | Mapping[str, Any]
"""One earlier step: an android_gym ``Step``, a ``(thought, action)`` pair or a dict with thought/action/response."""


def sanitize_policy_text(text: Any, extra_tokens: Iterable[str] = ()) -> str:
    """Untrusted text made safe to put in a policy message (see the module docstring for what changes).

    ``extra_tokens`` are further literal strings to defuse (e.g. a tokenizer's own special tokens): each
    has its first character replaced by a look-alike (or followed by a word joiner) so it no longer matches.
    ``None`` gives ``""``; other non-strings raise ``TypeError``.
    """
    if text is None:
        return ""
    if not isinstance(text, str):
        raise TypeError(f"untrusted text must be str, got {type(text).__name__}")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "".join(
        ch for ch in text if ch in _KEEP_CONTROL or unicodedata.category(ch) not in ("Cc", "Cf", "Cs")
    )
    text = text.replace("⟦", "[").replace("⟧", "]")
    text = _PIPE_TOKEN.sub(r"‹|\1|›", text)
    text = _SENTENCE_TAG.sub(r"‹\1›", text)
    text = _TURN_TAG.sub(r"‹\1›", text)
    text = _INST_TAG.sub(r"⟮\1⟯", text)
    for token in extra_tokens:
        if not isinstance(token, str):
            raise TypeError(f"extra_tokens must be strings, got {type(token).__name__}")
        if token and token not in ("<|box_start|>", "<|box_end|>"):
            head = _LOOKALIKE.get(token[0], token[0] + "\u2060")
            text = text.replace(token, head + token[1:])
    return text


def history_entry(item: HistoryItem, action_format: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """``(thought, action_text)`` of one earlier step, as the prompt shows it.

    A ``Step`` with a model reply (``response``) shows that reply's thought and action section verbatim
    (it is in the model's own coordinate frame); without a reply its typed action is written in UI-TARS
    syntax with ``format_action(action, "uitars", **action_format)``. A pair's action may be text or an
    ``Action``. A dict may hold ``response`` or ``thought``/``action``.
    """
    opts = dict(action_format or {})
    if isinstance(item, Step):
        if item.response and item.response.strip():
            return split_thought_action(item.response)
        return "", _action_text(item.action, opts)
    if isinstance(item, Mapping):
        response = item.get("response")
        if isinstance(response, str) and response.strip():
            return split_thought_action(response)
        thought = item.get("thought") or ""
        if not isinstance(thought, str):
            raise TypeError(f"history thought must be str, got {type(thought).__name__}")
        return thought.strip(), _action_text(item.get("action"), opts)
    if isinstance(item, tuple) and len(item) == 2:
        thought, action = item
        if thought is None:
            thought = ""
        if not isinstance(thought, str):
            raise TypeError(f"history thought must be str, got {type(thought).__name__}")
        return thought.strip(), _action_text(action, opts)
    raise TypeError(
        "each history item must be an android_gym Step, a (thought, action) pair or a dict, "
        f"got {type(item).__name__}"
    )


def _action_text(action: Any, opts: dict[str, Any]) -> str:
    """An action as prompt text: strings as given (stripped of a leading ``Action:``), Actions in UI-TARS form."""
    if action is None:
        return "(no valid action)"
    if isinstance(action, str):
        _, text = split_thought_action(action)
        return text or "(no valid action)"
    if isinstance(action, Action):
        return format_action(action, "uitars", **opts).removeprefix("Action: ")
    raise TypeError(f"a history action must be str, an android_gym Action or None, got {type(action).__name__}")


def _check_choice(value: str, name: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def _image_part(screenshot: Any) -> dict[str, Any]:
    """``{"type": "image"}`` with the PIL image when given, a bare placeholder when the image travels separately."""
    if screenshot is None:
        return {"type": "image"}
    return {"type": "image", "image": to_pil_image(screenshot)}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _content(parts: list[dict[str, Any]], as_parts: bool) -> str | list[dict[str, Any]]:
    """Merge neighbouring text parts; a text-only message becomes one string unless ``as_parts``."""
    merged: list[dict[str, Any]] = []
    for part in parts:
        if part["type"] == "text" and merged and merged[-1]["type"] == "text":
            merged[-1] = _text(merged[-1]["text"] + part["text"])
        else:
            merged.append(part)
    if as_parts or any(p["type"] != "text" for p in merged):
        return merged
    return merged[0]["text"] if merged else ""


def _screen_parts(mode: str, ui: str | None, screenshot: Any, label: str, clean: Callable[[Any], str]) -> list[dict]:
    parts: list[dict[str, Any]] = []
    if mode in ("screenshot", "both"):
        parts += [_text(f"{label} (screenshot):\n"), _image_part(screenshot), _text("\n")]
    if mode in ("xml", "both"):
        parts.append(_text(f"{label} (UI elements):\n{clean(ui)}\n"))
    return parts


def build_policy_messages(
    instruction: str,
    screen_ui: str | None = None,
    screenshot: Any = None,
    history: Sequence[HistoryItem] = (),
    *,
    mode: str = "xml",
    max_history: int | None = None,
    language: str = "English",
    history_style: str = "inline",
    history_observations: int = 0,
    action_space: Sequence[str] = UITARS_MOBILE_ACTION_SPACE,
    action_format: Mapping[str, Any] | None = None,
    system_prompt: str | None = None,
    content_as_parts: bool = False,
    extra_special_tokens: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """Chat messages asking a UI-TARS-style policy for its next ``Thought``/``Action``.

    Args:
        instruction: the user's task (untrusted: sanitised).
        screen_ui: the current screen as compressed UI text; required for ``mode`` "xml" and "both".
        screenshot: the current screenshot (PIL image, HxWx3 uint8 array or PNG bytes), embedded in an
            ``{"type": "image", "image": ...}`` part. In "screenshot"/"both" mode ``None`` leaves a bare
            ``{"type": "image"}`` placeholder, for TRL dataset rows whose images travel in an ``images`` column.
        history: earlier steps, oldest first (``Step``, ``(thought, action)`` pairs or dicts; see
            :func:`history_entry`).
        mode: "xml", "screenshot" or "both" (see :data:`POLICY_MODES`).
        max_history: show only the last N earlier steps (None: all, as in the paper; 0: none).
        language: the language the thought is to be written in.
        history_style: "inline" (one user message, the paper's layout) or "turns" (assistant turns).
        history_observations: "turns" only: how many of the most recent earlier steps also show their own
            screen (screenshot from ``Step.screenshot`` / UI text from ``Step.ui``) before their reply.
        action_space: the action lines listed in the prompt.
        action_format: options for ``format_action`` when a history action is a typed ``Action``
            (``screen_size``, ``coordinates``, ``image_size``, ...), so it is written in the policy's frame.
        system_prompt: an optional system message put first (UI-TARS uses none of its own).
        content_as_parts: give text-only messages a list of parts instead of one string.
        extra_special_tokens: literal strings to defuse in untrusted text besides the usual chat tokens.

    Returns:
        ``[{"role": ..., "content": str | list[part]}, ...]`` for ``tokenizer.apply_chat_template`` or a VLM
        processor (add the generation prompt there).
    """
    if not isinstance(instruction, str) or not instruction.strip():
        raise ValueError("instruction must be a non-empty string")
    _check_choice(mode, "mode", POLICY_MODES)
    _check_choice(history_style, "history_style", HISTORY_STYLES)
    if mode in ("xml", "both") and not isinstance(screen_ui, str):
        raise ValueError(f"mode={mode!r} needs screen_ui (the compressed UI text of the current screen)")
    if mode == "xml" and screenshot is not None:
        raise ValueError("mode='xml' shows no screenshot: pass mode='both' or 'screenshot' to include it")
    if max_history is not None and (isinstance(max_history, bool) or not isinstance(max_history, int)
                                    or max_history < 0):
        raise ValueError(f"max_history must be None or an integer >= 0, got {max_history!r}")
    if isinstance(history_observations, bool) or not isinstance(history_observations, int) or history_observations < 0:
        raise ValueError(f"history_observations must be an integer >= 0, got {history_observations!r}")
    if history_observations and history_style != "turns":
        raise ValueError("history_observations needs history_style='turns' (inline history shows no screens)")
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise TypeError("history must be a sequence of earlier steps, oldest first")
    if not isinstance(language, str) or not language.strip():
        raise ValueError("language must be a non-empty string")
    if isinstance(action_space, str) or not all(isinstance(line, str) for line in action_space):
        raise TypeError("action_space must be a sequence of strings, one action per line")
    extra = tuple(extra_special_tokens)

    def clean(text: Any) -> str:
        return sanitize_policy_text(text, extra)

    total = len(history)
    first = 0 if max_history is None else max(0, total - max_history)
    shown = list(history[first:])
    entries = [history_entry(item, action_format) for item in shown]

    prompt = (
        f"{_ROLE_TEXT}\n\n"
        f"## Output format\n{_OUTPUT_FORMAT}\n\n"
        "## Action space\n" + "\n".join(action_space) + "\n\n"
        "## Notes\n"
        f"- Write the Thought in {clean(language.strip())}.\n"
        "- In the Thought, briefly recap what you have done so far, make a short plan, then state the next "
        "action and the element it targets in one sentence.\n"
        "- Give exactly one action after Action:.\n"
        f"- {_COORDINATE_NOTES[mode]}\n\n"
        f"## User instruction\n{clean(instruction.strip())}\n"
    )
    omitted = f"({first} earlier step{'s' if first != 1 else ''} not shown.)\n" if first else ""
    messages: list[dict[str, Any]] = []
    if system_prompt is not None:
        if not isinstance(system_prompt, str):
            raise TypeError(f"system_prompt must be str or None, got {type(system_prompt).__name__}")
        messages.append({"role": "system", "content": _content([_text(system_prompt)], content_as_parts)})

    if history_style == "inline":
        lines = ["\n## Interaction history\n", omitted]
        if not entries:
            lines.append("None yet: this is the first step.\n" if not first else "")
        for number, (thought, action) in enumerate(entries, start=first + 1):
            lines.append(f"Step {number}\nThought: {clean(thought)}\nAction: {clean(action)}\n")
        parts = [_text(prompt + "".join(lines) + "\n")]
        parts += _screen_parts(mode, screen_ui, screenshot, "## Current screen", clean)
        messages.append({"role": "user", "content": _content(parts, content_as_parts)})
        return messages

    head = prompt + (f"\n{omitted}" if omitted else "")
    messages.append({"role": "user", "content": _content([_text(head)], content_as_parts)})
    with_screens = set(range(max(0, len(shown) - history_observations), len(shown)))
    for index, (item, (thought, action)) in enumerate(zip(shown, entries)):
        if index in with_screens and isinstance(item, Step):
            past = _past_screen_parts(mode, item, first + index + 1, clean)
            if past:
                messages.append({"role": "user", "content": _content(past, content_as_parts)})
        reply = f"Thought: {clean(thought)}\nAction: {clean(action)}" if thought else f"Action: {clean(action)}"
        messages.append({"role": "assistant", "content": _content([_text(reply)], content_as_parts)})
    parts = _screen_parts(mode, screen_ui, screenshot, "Current screen", clean)
    messages.append({"role": "user", "content": _content(parts, content_as_parts)})
    return messages


def _past_screen_parts(mode: str, step: Step, number: int, clean: Callable[[Any], str]) -> list[dict[str, Any]]:
    """The screen an earlier step acted on, when the step kept it (screenshot and/or UI text per ``mode``)."""
    parts: list[dict[str, Any]] = []
    if mode in ("screenshot", "both") and step.screenshot is not None:
        parts += [_text(f"Screen at step {number} (screenshot):\n"), _image_part(step.screenshot), _text("\n")]
    if mode in ("xml", "both") and step.ui:
        parts.append(_text(f"Screen at step {number} (UI elements):\n{clean(step.ui)}\n"))
    return parts


def fit_policy_messages(
    count_tokens: Callable[[list[dict[str, Any]]], int],
    max_tokens: int,
    instruction: str,
    screen_ui: str | None = None,
    screenshot: Any = None,
    history: Sequence[HistoryItem] = (),
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """:func:`build_policy_messages` with the longest history (oldest steps dropped first) within ``max_tokens``.

    ``count_tokens(messages)`` measures a prompt, e.g. ``lambda m: len(tok.apply_chat_template(m, tokenize=True))``.
    Raises ``ValueError`` when even the prompt without history is too long. ``max_history`` in ``kwargs``
    caps the history further.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    cap = kwargs.pop("max_history", None)
    longest = len(history) if cap is None else min(cap, len(history))

    def build(n: int) -> list[dict[str, Any]]:
        return build_policy_messages(instruction, screen_ui, screenshot, history, max_history=n, **kwargs)

    low, high = 0, longest
    best = build(0)
    if count_tokens(best) > max_tokens:
        raise ValueError(f"the prompt without any history already has {count_tokens(best)} tokens > {max_tokens}")
    while low < high:  # the largest n in [0, longest] that fits; token counts grow with n
        mid = (low + high + 1) // 2
        candidate = build(mid)
        if count_tokens(candidate) <= max_tokens:
            low, best = mid, candidate
        else:
            high = mid - 1
    return best


def render_messages_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text rendering of chat messages (for logs, text-only backends and token estimates).

    Each message starts with a ``⟦role⟧`` line; images show as ``⟦image⟧``. Text built by
    :func:`build_policy_messages` never contains the ``⟦`` ``⟧`` brackets, so the role lines are unambiguous.
    """
    out: list[str] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
            raise ValueError(f"message {i} must be a dict with 'role' and 'content'")
        content = message["content"]
        if isinstance(content, str):
            body = content
        else:
            pieces = []
            for part in content:
                kind = part.get("type")
                if kind == "text":
                    pieces.append(part["text"])
                elif kind in ("image", "image_url"):
                    pieces.append("⟦image⟧")
                else:
                    raise ValueError(f"message {i} has a content part of unknown type {kind!r}")
            body = "".join(pieces)
        out.append(f"⟦{message['role']}⟧\n{body.rstrip()}")
    return "\n".join(out) + "\n"


def parse_policy_output(
    text: str,
    screen_size: tuple[int, int] | None = None,
    *,
    coordinates: str = "auto",
    image_size: tuple[int, int] | None = None,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
    factor: int = FACTOR,
) -> tuple[str, Action | ActionParseError]:
    """``(thought, action)`` of a policy reply; a malformed reply gives an ``ActionParseError`` in place of the action.

    Never raises for malformed output (non-string output included); invalid options (an unknown
    ``coordinates`` space, a space that needs ``screen_size``) still raise ``ValueError`` since they are
    programming errors. The action is read by ``android_gym.actions.parse.parse_action`` (first action
    if the reply holds several) and mapped to screen pixels by the coordinate options.
    """
    coordinate_space(coordinates, screen_size=screen_size, image_size=image_size, factor=factor,
                     min_pixels=min_pixels, max_pixels=max_pixels)  # options checked before any parsing
    if not isinstance(text, str):
        return "", ActionParseError(f"the policy output must be text, got {type(text).__name__}")
    thought, _ = split_thought_action(text)
    try:
        action = parse_action(text, style="uitars", screen_size=screen_size, coordinates=coordinates,
                              image_size=image_size, min_pixels=min_pixels, max_pixels=max_pixels, factor=factor)
    except ActionParseError as err:
        return thought, err
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as err:  # a parser defect, not ours to raise
        return thought, ActionParseError(f"the action parser failed ({type(err).__name__}: {err})", text=text)
    return thought, action


# ---------------------------------------------------------------------------------------------------------
# The index format: numbered UI elements in, one AndroidWorld-style JSON action out (for small text policies)

INDEX_ACTION_SPACE: tuple[str, ...] = (
    '{"action_type": "click", "index": <n>}',
    '{"action_type": "long_press", "index": <n>}',
    '{"action_type": "input_text", "text": "<text>", "index": <n>}  # taps element n, types the text, presses Enter',
    '{"action_type": "scroll", "direction": "<up|down|left|right>", "index": <n>}  # index is optional',
    '{"action_type": "open_app", "app_name": "<app name>"}',
    '{"action_type": "navigate_back"}',
    '{"action_type": "navigate_home"}',
    '{"action_type": "keyboard_enter"}',
    '{"action_type": "wait"}',
    '{"action_type": "status", "goal_status": "complete"}  # the task is done',
    '{"action_type": "answer", "text": "<answer>"}  # ends the task with the answer to a question',
)
"""The index format's actions, one JSON form per line (AndroidWorld's JSONAction vocabulary)."""

_INDEX_ROLE_TEXT = (
    "You operate an Android phone for a user. Reply with the single next action as one JSON object and "
    "nothing else. Elements are named by their number in the screen list."
)
_INDEX_RE = re.compile(r'"index"\s*:\s*(-?\d+)')
_WHITESPACE = re.compile(r"\s+")
# Which element flag to prefer when several elements share the point an action targets.
_PREFERRED_FLAG = {"click": "clickable", "long_press": "long_clickable", "type": "editable", "scroll": "scrollable"}


def _one_line(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` characters with an ellipsis."""
    text = _WHITESPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: max(1, limit - 1)].rstrip() + "…"


def _element_line(index: int, element: Any, max_label_chars: int, clean: Callable[[Any], str]) -> str | None:
    """``[i] Class 'label' hint '...' states actions`` for one element; None when it shows and offers nothing."""
    label = _one_line(clean(element.label or ""), max_label_chars)
    hint = _one_line(clean(element.hint or ""), max_label_chars)
    actions = tuple(element.actions)
    if not (label or hint or actions):
        return None
    parts = [f"[{index}] {clean(element.short_class) or 'View'}"]
    if label:
        parts.append(f"'{label}'")
    if hint:
        parts.append(f"hint '{hint}'")
    if not label and not hint and element.short_resource_id:
        parts.append(f"id {clean(element.short_resource_id)}")
    parts.extend(element.states)
    parts.extend(actions)
    return " ".join(parts)


def render_indexed_elements(
    elements: Sequence[Any],
    *,
    max_elements: int | None = None,
    max_label_chars: int = 60,
    extra_special_tokens: Iterable[str] = (),
) -> str:
    """The screen as numbered element lines, e.g. ``[3] Switch 'Wi-Fi' checked click``.

    The number is the element's position in ``elements`` (android_gym ``UIElement`` objects, e.g. the env's
    ``obs["elements"]``), so an answer's ``"index"`` resolves through ``parse_action(elements=elements)``.
    Elements without a label, hint or action are left out (their numbers are skipped); labels are sanitised,
    put on one line and cut to ``max_label_chars``. ``max_elements`` caps the lines shown (a closing line
    says how many more there were).
    """
    if isinstance(elements, (str, bytes)) or not isinstance(elements, Sequence):
        raise TypeError(f"elements must be a sequence of UI elements, got {type(elements).__name__}")
    if max_elements is not None and (isinstance(max_elements, bool) or not isinstance(max_elements, int)
                                     or max_elements < 0):
        raise ValueError(f"max_elements must be None or an integer >= 0, got {max_elements!r}")
    if isinstance(max_label_chars, bool) or not isinstance(max_label_chars, int) or max_label_chars < 1:
        raise ValueError(f"max_label_chars must be a positive integer, got {max_label_chars!r}")
    extra = tuple(extra_special_tokens)

    def clean(text: Any) -> str:
        return sanitize_policy_text(text, extra)

    lines: list[str] = []
    hidden = 0
    for index, element in enumerate(elements):
        try:
            line = _element_line(index, element, max_label_chars, clean)
        except AttributeError as err:
            raise TypeError(f"elements[{index}] is not a UI element (android_gym UIElement): {err}") from None
        if line is None:
            continue
        if max_elements is not None and len(lines) >= max_elements:
            hidden += 1
            continue
        lines.append(line)
    if hidden:
        lines.append(f"({hidden} more element{'s' if hidden != 1 else ''} not shown)")
    return "\n".join(lines) if lines else "(no elements on screen)"


def index_target(text: str, elements: Sequence[Any] | None, max_label_chars: int = 40) -> str | None:
    """A short description (``TextView 'Display'``) of the element an index-format answer names, or None.

    Kept with each step so later prompts can say what an earlier ``"index": n`` pointed at (the numbers
    only mean something on the screen they were read from).
    """
    if not isinstance(text, str) or not elements:
        return None
    match = _INDEX_RE.search(text)
    if match is None:
        return None
    index = int(match.group(1))
    if not 0 <= index < len(elements):
        return None
    element = elements[index]
    label = _one_line(sanitize_policy_text(getattr(element, "label", "") or getattr(element, "hint", "") or ""),
                      max_label_chars)
    kind = sanitize_policy_text(getattr(element, "short_class", "") or "") or "View"
    return f"{kind} '{label}'" if label else kind


_SCREEN_LINE_RE = re.compile(r"^\[(\d+)\] (.+)$")
_QUOTED_RE = re.compile(r"'([^']*)'")
_ELEMENT_ACTION_WORDS = frozenset(("click", "long-click", "scroll", "check", "input"))


def screen_index_target(state: str, answer: str, *, max_children: int = 3) -> str | None:
    """What an index-format ``answer`` points at on the screen rendered in ``state`` (the templated prompt), or None.

    Reads the element lines of :func:`render_indexed_elements` back from the prompt text: ``[4] TextView
    'Network & internet'`` gives ``TextView 'Network & internet'``. A container without a label of its own
    (``[3] LinearLayout click``) is named by the labels of the lines right after it (its children, in the
    screen's depth-first order): at most ``max_children`` lines, ending at the first actionable one, whose label
    counts when it has one (a switch inside a row) and which ends the run unlabelled (the next row). None when
    the answer names no index or the screen has no such line.
    """
    if not isinstance(state, str) or not isinstance(answer, str):
        return None
    match = _INDEX_RE.search(answer)
    if match is None:
        return None
    head, sep, screen = state.rpartition("## Screen\n")
    lines = [m.groups() for m in map(_SCREEN_LINE_RE.match, (screen if sep else state).splitlines()) if m]
    position = {int(number): i for i, (number, _) in enumerate(lines)}
    i = position.get(int(match.group(1)))
    if i is None:
        return None
    text = lines[i][1]
    if _QUOTED_RE.search(text) is None:
        labels: list[str] = []
        for _, child in lines[i + 1:i + 1 + max_children]:
            words = child.split()
            if words[-1] in _ELEMENT_ACTION_WORDS and _QUOTED_RE.search(child) is None:
                break
            labels += _QUOTED_RE.findall(child)
            if words[-1] in _ELEMENT_ACTION_WORDS:
                break
        if labels:
            text += " " + " ".join(f"'{label}'" for label in labels)
    return text


def _index_history_entry(item: HistoryItem, clean: Callable[[Any], str]) -> str:
    """One earlier step as an index-format history line: the action JSON, plus what its index pointed at."""
    target = None
    if isinstance(item, Step):
        target = item.info.get("target") if isinstance(item.info, Mapping) else None
        if item.response and item.response.strip():
            text = split_thought_action(item.response)[1]
        else:
            text = _index_fallback_text(item.action)
    elif isinstance(item, Mapping):
        target = item.get("target")
        response = item.get("response")
        if isinstance(response, str) and response.strip():
            text = split_thought_action(response)[1]
        else:
            action = item.get("action")
            text = action.strip() if isinstance(action, str) else _index_fallback_text(action)
    else:
        _, text = history_entry(item)
    text = _one_line(clean(text), 300) or "(no valid action)"
    if isinstance(target, str) and target.strip():
        return f"{text} on {_one_line(clean(target), 60)}"
    return text


def _index_fallback_text(action: Any) -> str:
    """An earlier action with no model reply kept: its AndroidWorld JSON (pixels), else our dict form."""
    if action is None:
        return "(no valid action)"
    if not isinstance(action, Action):
        raise TypeError(f"a history action must be str, an android_gym Action or None, got {type(action).__name__}")
    try:
        return format_action(action, "androidworld")
    except (ActionFormatError, ValueError):
        return json.dumps(action.to_dict(), ensure_ascii=False)


def build_index_policy_messages(
    instruction: str,
    elements: Sequence[Any],
    history: Sequence[HistoryItem] = (),
    *,
    screenshot: Any = None,
    mode: str = "xml",
    max_history: int | None = None,
    max_elements: int | None = None,
    max_label_chars: int = 60,
    action_space: Sequence[str] = INDEX_ACTION_SPACE,
    system_prompt: str | None = None,
    content_as_parts: bool = False,
    extra_special_tokens: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """Chat messages asking an index-format policy for its next action (one user message, compact).

    Args:
        instruction: the user's task (untrusted: sanitised).
        elements: the current screen's UI elements (``obs["elements"]``), listed by
            :func:`render_indexed_elements`; an answer's ``"index"`` is a position in this sequence.
        history: earlier steps, oldest first: ``Step`` (its ``response`` JSON and ``info["target"]``),
            dicts with ``response``/``action`` and ``target``, or ``(thought, action)`` pairs.
        screenshot: the screenshot for ``mode`` "screenshot"/"both" (the element list is shown in every
            mode, since answers name elements by number); ``None`` leaves a bare image placeholder.
        mode: "xml", "screenshot" or "both".
        max_history: show only the last N earlier steps (None: all).
        max_elements, max_label_chars: see :func:`render_indexed_elements`.
        action_space: the action lines listed in the prompt; empty leaves the section out (a model
            fine-tuned on the format, e.g. a tiny one, does not need it and prompts get much shorter).
        system_prompt: an optional system message put first.
        content_as_parts: give text-only messages a list of parts instead of one string.
        extra_special_tokens: literal strings to defuse in untrusted text besides the usual chat tokens.
    """
    if not isinstance(instruction, str) or not instruction.strip():
        raise ValueError("instruction must be a non-empty string")
    _check_choice(mode, "mode", POLICY_MODES)
    if mode == "xml" and screenshot is not None:
        raise ValueError("mode='xml' shows no screenshot: pass mode='both' or 'screenshot' to include it")
    if max_history is not None and (isinstance(max_history, bool) or not isinstance(max_history, int)
                                    or max_history < 0):
        raise ValueError(f"max_history must be None or an integer >= 0, got {max_history!r}")
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise TypeError("history must be a sequence of earlier steps, oldest first")
    if isinstance(action_space, str) or not all(isinstance(line, str) for line in action_space):
        raise TypeError("action_space must be a sequence of strings, one action per line")
    extra = tuple(extra_special_tokens)

    def clean(text: Any) -> str:
        return sanitize_policy_text(text, extra)

    screen = render_indexed_elements(elements, max_elements=max_elements, max_label_chars=max_label_chars,
                                     extra_special_tokens=extra)
    total = len(history)
    first = 0 if max_history is None else max(0, total - max_history)
    lines = [f"{n}. {_index_history_entry(item, clean)}" for n, item in enumerate(history[first:], start=first + 1)]
    if first:
        lines.insert(0, f"({first} earlier action{'s' if first != 1 else ''} not shown)")
    past = "\n".join(lines) if lines else "None yet."
    actions = "## Actions\n" + "\n".join(action_space) + "\n\n" if action_space else ""
    head = (
        f"{_INDEX_ROLE_TEXT}\n\n{actions}"
        f"## Task\n{clean(instruction.strip())}\n\n## Previous actions\n{past}\n\n## Screen\n"
    )
    parts = [_text(head)]
    if mode in ("screenshot", "both"):
        parts += [_image_part(screenshot), _text("\n")]
    parts.append(_text(screen + "\n"))
    messages: list[dict[str, Any]] = []
    if system_prompt is not None:
        if not isinstance(system_prompt, str):
            raise TypeError(f"system_prompt must be str or None, got {type(system_prompt).__name__}")
        messages.append({"role": "system", "content": _content([_text(system_prompt)], content_as_parts)})
    messages.append({"role": "user", "content": _content(parts, content_as_parts)})
    return messages


def format_index_action(
    action: Action,
    elements: Sequence[Any],
    *,
    screen_size: tuple[int, int] | None = None,
    type_presses_enter: bool = False,
) -> str:
    """``action`` as an index-format answer: AndroidWorld JSON naming the element whose centre it targets.

    A point action (click, long press, typing into a field, scrolling at a point) becomes ``"index": n`` for
    the element whose centre is exactly that point (preferring one that is clickable / long-clickable /
    editable / scrollable as fits, then the smallest), so :func:`parse_index_output` gives back the same
    action; a point that is no element's centre stays as ``"x"``/``"y"`` pixels. ``input_text`` always
    presses Enter: a ``Type`` with ``submit=False`` raises ``ActionFormatError`` unless
    ``type_presses_enter`` (then it is written as if ``submit=True``). Drags and non edge-to-edge swipes
    raise ``ActionFormatError``.
    """
    if not isinstance(action, Action):
        raise TypeError(f"format_index_action needs an android_gym Action, got {type(action).__name__}")
    if isinstance(action, Type) and not action.submit and type_presses_enter:
        action = dataclasses.replace(action, submit=True)
    data = json.loads(format_action(action, "androidworld", screen_size=screen_size))
    if "x" in data and "y" in data:
        index = _element_at_centre(elements, int(data["x"]), int(data["y"]), _PREFERRED_FLAG.get(action.type))
        if index is not None:
            del data["x"], data["y"]
            data["index"] = index
    return json.dumps(data, ensure_ascii=False)


def _element_at_centre(elements: Sequence[Any], x: int, y: int, flag: str | None) -> int | None:
    """Index of the element centred exactly on (x, y): the one with ``flag`` set first, then the smallest."""
    best: tuple[tuple[bool, int, int], int] | None = None
    for index, element in enumerate(elements or ()):
        center = getattr(element, "center", None)
        if center is None or (int(center[0]), int(center[1])) != (x, y):
            continue
        x1, y1, x2, y2 = element.bounds
        key = (not (flag and getattr(element, flag, False)), (x2 - x1) * (y2 - y1), index)
        if best is None or key < best[0]:
            best = (key, index)
    return None if best is None else best[1]


def parse_index_output(
    text: str,
    elements: Sequence[Any] | None,
    screen_size: tuple[int, int] | None = None,
) -> tuple[str, Action | ActionParseError]:
    """``(thought, action)`` of an index-format reply; a malformed reply gives an ``ActionParseError`` instead.

    The JSON (optionally after ``Action:``, with any text before it taken as the thought) is read by
    ``android_gym.parse_action(style="androidworld", elements=elements)``: ``"index"`` becomes the centre of
    that element; ``"x"``/``"y"`` are screen pixels. Never raises for malformed output.
    """
    if not isinstance(text, str):
        return "", ActionParseError(f"the policy output must be text, got {type(text).__name__}")
    thought, _ = split_thought_action(text)
    try:
        action = parse_action(text, style="androidworld", screen_size=screen_size, elements=elements)
    except ActionParseError as err:
        return thought, err
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as err:  # a parser defect, not ours to raise
        return thought, ActionParseError(f"the action parser failed ({type(err).__name__}: {err})", text=text)
    return thought, action
