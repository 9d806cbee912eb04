"""Tiny, randomly initialised causal LMs with a locally trained tokenizer, for offline tests and smoke runs.

No model hub is reachable on the machines this project is tested on, yet reward models, servers and
trainers need a real ``PreTrainedModel`` + tokenizer pair to exercise their code paths. This module
builds one in about a second: a byte-level BPE tokenizer trained with ``tokenizers`` on a built-in
corpus of UI-agent text (plus any text you pass), a chat template, and a tiny ``Qwen2ForCausalLM``.
``scripted_backend`` makes such a model write a chosen text (a deterministic judge for tests) while the
backend still reports the model's real token log-probabilities.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import (
    GenerationConfig,
    LogitsProcessor,
    LogitsProcessorList,
    PreTrainedModel,
    PreTrainedTokenizerFast,
    Qwen2Config,
    Qwen2ForCausalLM,
    Qwen2Tokenizer,
    Qwen2VLConfig,
    Qwen2VLForConditionalGeneration,
    Qwen2VLProcessor,
)
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
from transformers.processing_utils import ProcessorMixin

if TYPE_CHECKING:
    from coach_reward.backends import TransformersBackend

BOS_TOKEN = "<|bos|>"
EOS_TOKEN = "<|im_end|>"
PAD_TOKEN = "<|pad|>"
IM_START_TOKEN = "<|im_start|>"
ENDOFTEXT_TOKEN = "<|endoftext|>"
IMAGE_TOKEN = "<|image_pad|>"
SPECIAL_TOKENS = (BOS_TOKEN, EOS_TOKEN, PAD_TOKEN, IM_START_TOKEN, ENDOFTEXT_TOKEN, IMAGE_TOKEN)
"""Special tokens of every tiny tokenizer; their ids are 0..5 in this order."""

# Added (non-special) tokens: kept whole by the tokenizer and kept by ``decode(skip_special_tokens=True)``,
# so that judgments and UI-TARS boxes survive a round trip through generate/decode.
# Qwen2's pre-tokenizer split (letters, single digits, punctuation runs, newlines, spaces).
QWEN2_PRETOKENIZE_REGEX = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

ADDED_TOKENS = ("<think>", "</think>", "<|box_start|>", "<|box_end|>", "<ans>", "</ans>")
"""Non-special added tokens (reasoning tags, UI-TARS box markers, outcome answer tags)."""

# A small Qwen-style chat template. Images in structured content become one IMAGE_TOKEN; assistant
# turns are wrapped in {% generation %} so TRL's assistant-only loss can find them.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['role'] == 'assistant' -%}{%- generation -%}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>' -}}{%- endgeneration -%}{{- '\\n' -}}"
    "{%- else -%}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'text' -%}{{- part['text'] -}}"
    "{%- elif part['type'] in ('image', 'image_url') -%}{{- '<|image_pad|>' -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)
"""Jinja chat template set on every tiny tokenizer (system/user/assistant, images as one placeholder)."""

_APPS = ("Audio Recorder", "Contacts", "Clock", "Settings", "Markor", "Simple SMS", "Files", "Chrome",
         "Calendar", "Camera", "Broccoli", "Expense", "Tasks", "Gallery", "VLC")
_WIDGETS = ("TextView", "Button", "EditText", "ImageView", "Switch", "CheckBox", "RecyclerView",
            "LinearLayout", "FrameLayout", "ImageButton")
_WORDS = ("Save", "Cancel", "OK", "Delete", "Search", "Add", "New", "Done", "Settings", "Wi-Fi",
          "Bluetooth", "alarm", "contact", "note", "recording", "message", "name", "title", "Next", "Back")


def _builtin_corpus(seed: int = 1234, n: int = 400) -> list[str]:
    """Deterministic UI-agent-ish text: agent outputs, action strings, hierarchy XML, judgments."""
    rng = random.Random(seed)
    lines: list[str] = []
    for _ in range(n):
        x, y = rng.randint(0, 1080), rng.randint(0, 2400)
        x2, y2 = rng.randint(0, 1080), rng.randint(0, 2400)
        app, w, word = rng.choice(_APPS), rng.choice(_WIDGETS), rng.choice(_WORDS)
        verdict = rng.choice(("True", "False"))
        lines.extend([
            f"Thought: I need to open {app} and tap {word}.\nAction: click(start_box='({x},{y})')",
            f"Action: click(start_box='<|box_start|>({x},{y})<|box_end|>')",
            f"long_press(start_box='<|box_start|>({x},{y})<|box_end|>')",
            f"scroll(start_box='<|box_start|>({x},{y})<|box_end|>', end_box='<|box_start|>({x2},{y2})<|box_end|>')",
            f"drag(start_box='({x},{y})', end_box='({x2},{y2})')",
            f"type(content='{word} {rng.randint(0, 99)}')",
            f"open_app(app_name='{app}')",
            "press_back() press_home() press_enter() wait() finished(content='')",
            f'<node index="{rng.randint(0, 9)}" text="{word}" resource-id="com.example:id/{word.lower()}" '
            f'class="android.widget.{w}" clickable="true" bounds="[{x},{y}][{x2},{y2}]" />',
            f"[n{rng.randint(0, 9999):04x}] {w} ;click ; {word} ;;: bounds: [{x},{y}][{x2},{y2}]",
            f"<think>The agent wants {word} in {app}. The action is reasonable.</think> judgment:{verdict}",
            f"<analysis>The final screen shows {word}.</analysis> <ans>{rng.choice(('yes', 'no'))}</ans>",
            f"Instruction: Open {app} and create a {word} named {rng.randint(100, 999)}.",
            f'do(action="Tap", element=[{x},{y},{x2},{y2}]) finish(message="{word}")',
            " ".join(str(rng.randint(0, 2400)) for _ in range(6)),
        ])
    return lines


def build_tiny_tokenizer(vocab_size: int = 1024, corpus: Iterable[str] | None = None) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE tokenizer locally (built-in corpus + ``corpus``) with specials and a chat template.

    Any string round-trips through encode/decode because the byte alphabet is always included.
    """
    n_fixed = len(SPECIAL_TOKENS) + len(ADDED_TOKENS) + 256
    if vocab_size < n_fixed:
        raise ValueError(f"vocab_size must be at least {n_fixed} (specials + 256 bytes), got {vocab_size}")
    texts = _builtin_corpus()
    if corpus is not None:
        if isinstance(corpus, str):
            raise TypeError("corpus must be an iterable of strings, not a single string")
        texts.extend(str(t) for t in corpus)

    # Train with exactly the pipeline ``Qwen2Tokenizer`` rebuilds on load (NFC, Qwen's split regex,
    # byte-level), so the tokenizer AutoTokenizer reloads for a qwen2 model encodes identically.
    backend = Tokenizer(models.BPE())
    backend.normalizer = normalizers.NFC()
    backend.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(ADDED_TOKENS),
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        min_frequency=2,
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer=trainer)
    trained = json.loads(backend.to_str())["model"]
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in trained["merges"]]

    tokenizer = Qwen2Tokenizer(
        vocab=dict(trained["vocab"]),
        merges=merges,
        unk_token=None,
        bos_token=BOS_TOKEN,
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        extra_special_tokens=[IM_START_TOKEN, ENDOFTEXT_TOKEN, IMAGE_TOKEN],
        padding_side="left",
        model_max_length=8192,
    )
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in ADDED_TOKENS])
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_tiny_causal_lm(
    save_dir: str | Path | None = None,
    *,
    vocab_size: int = 1024,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    seed: int = 0,
    corpus: Iterable[str] | None = None,
) -> tuple[PreTrainedModel, PreTrainedTokenizerFast]:
    """Build a tiny random ``Qwen2ForCausalLM`` and its tokenizer, deterministic for ``seed``.

    ``vocab_size`` is the model's vocabulary and the tokenizer's target size; BPE stops earlier when
    the corpus has no more frequent pairs, leaving ids past ``len(tokenizer)`` unused (they decode to "").

    When ``save_dir`` is given both are saved there and reload offline with
    ``AutoModelForCausalLM.from_pretrained(save_dir)`` / ``AutoTokenizer.from_pretrained(save_dir)``.
    """
    if hidden_size <= 0 or num_layers <= 0 or num_heads <= 0:
        raise ValueError(f"hidden_size, num_layers and num_heads must be positive, got "
                         f"{hidden_size}, {num_layers}, {num_heads}")
    if hidden_size % num_heads:
        raise ValueError(f"hidden_size ({hidden_size}) must be divisible by num_heads ({num_heads})")
    tokenizer = build_tiny_tokenizer(vocab_size=vocab_size, corpus=corpus)
    config = Qwen2Config(
        vocab_size=max(vocab_size, len(tokenizer)),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        use_cache=True,
    )
    # Seed a forked RNG so building a model neither depends on nor disturbs the caller's global RNG state.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model.eval()
    if save_dir is not None:
        save_dir = Path(save_dir)
        save_dir.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(save_dir)
        tokenizer.save_pretrained(save_dir)
    return model, tokenizer


VISION_TOKENS = ("<|vision_start|>", "<|vision_end|>", "<|video_pad|>")
"""Extra special tokens of the tiny vision-language tokenizer (appended after the text vocabulary)."""


class ImageOnlyQwen2VLProcessor(Qwen2VLProcessor):
    """A Qwen2-VL processor for images only: the stock one requires a video processor, which needs torchvision."""

    def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
        self.image_token, self.video_token = IMAGE_TOKEN, "<|video_pad|>"
        self.image_token_id = tokenizer.convert_tokens_to_ids(self.image_token)
        self.video_token_id = tokenizer.convert_tokens_to_ids(self.video_token)
        ProcessorMixin.__init__(self, image_processor, tokenizer, chat_template=chat_template)


def build_tiny_vision_lm(
    *,
    vocab_size: int = 1024,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    seed: int = 0,
    min_pixels: int = 56 * 56,
    max_pixels: int = 112 * 112,
    corpus: Iterable[str] | None = None,
) -> tuple[PreTrainedModel, ImageOnlyQwen2VLProcessor]:
    """Build a tiny random ``Qwen2VLForConditionalGeneration`` and its processor (in memory, deterministic).

    Images are resized into [min_pixels, max_pixels] (Qwen2-VL smart resize, 14-pixel patches merged
    2x2), so a screenshot costs a handful of tokens. The chat template renders an image as
    ``<|vision_start|><|image_pad|><|vision_end|>``.
    """
    if hidden_size % num_heads or (hidden_size // num_heads) % 2:
        raise ValueError(f"hidden_size/num_heads must be an even integer, got {hidden_size}/{num_heads}")
    tokenizer = build_tiny_tokenizer(vocab_size=vocab_size, corpus=corpus)
    tokenizer.add_special_tokens({"additional_special_tokens": list(VISION_TOKENS)},
                                 replace_extra_special_tokens=False)
    tokenizer.chat_template = CHAT_TEMPLATE.replace(
        "{{- '<|image_pad|>' -}}", "{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}")
    image_processor = Qwen2VLImageProcessorPil(min_pixels=min_pixels, max_pixels=max_pixels)
    processor = ImageOnlyQwen2VLProcessor(image_processor, tokenizer, chat_template=tokenizer.chat_template)
    half = hidden_size // num_heads // 2
    mrope = [half - 2 * (half // 3), half // 3, half // 3]  # temporal, height, width sections of the rotary dims
    config = Qwen2VLConfig(
        text_config={
            "vocab_size": max(vocab_size, len(tokenizer)), "hidden_size": hidden_size,
            "intermediate_size": hidden_size * 2, "num_hidden_layers": num_layers,
            "num_attention_heads": num_heads, "num_key_value_heads": num_heads,
            "max_position_embeddings": 8192, "rope_scaling": {"type": "mrope", "mrope_section": mrope},
            "bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        vision_config={"depth": 1, "embed_dim": 32, "hidden_size": hidden_size, "num_heads": 2, "mlp_ratio": 2,
                       "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3},
        image_token_id=processor.image_token_id,
        video_token_id=processor.video_token_id,
        vision_start_token_id=tokenizer.convert_tokens_to_ids("<|vision_start|>"),
        vision_end_token_id=tokenizer.convert_tokens_to_ids("<|vision_end|>"),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2VLForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    model.eval()
    return model, processor


# --------------------------------------------------------------------------------------------------
# Scripted output: a real model made to write a chosen text (deterministic judges for tests)
# --------------------------------------------------------------------------------------------------


class ForcedText(LogitsProcessor):
    """Force generation to emit ``ids`` (then keep repeating the last one); the model's own logits, hence its
    log-probabilities, are what the backend reports, so token-probability code runs on real numbers.

    Each new ``generate`` call starts the script again: the tail since the last start no longer matches it.
    """

    def __init__(self, ids: list[int]):
        if not ids:
            raise ValueError("ForcedText needs at least one token id")
        self.ids, self.start = list(ids), None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        length = input_ids.shape[1]
        if self.start is None or not (0 <= length - self.start <= len(self.ids)) or \
                input_ids[0, self.start:].tolist() != self.ids[: length - self.start]:
            self.start = length
        forced = torch.full_like(scores, -torch.inf)
        forced[:, self.ids[min(length - self.start, len(self.ids) - 1)]] = 0.0
        return forced


def scripted_backend(model: PreTrainedModel, tokenizer_or_processor: PreTrainedTokenizerFast | ProcessorMixin,
                     text: str) -> TransformersBackend:
    """A ``TransformersBackend`` on ``model`` that always answers ``text`` (then end of turn)."""
    from coach_reward.backends import TransformersBackend

    tok = getattr(tokenizer_or_processor, "tokenizer", tokenizer_or_processor)
    ids = tok.encode(text) + [tok.eos_token_id]
    return TransformersBackend(model, tokenizer_or_processor,
                               generate_kwargs={"logits_processor": LogitsProcessorList([ForcedText(ids)])})
