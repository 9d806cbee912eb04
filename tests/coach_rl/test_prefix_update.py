"""share_prompt_update: the K replies of a state share one prompt pass in the actor update (coach_rl.prefix_update).

A tiny real Qwen2 in a real CoachTrainer: the packed path's per-token log-probs, Eq. 4 loss and gradients equal TRL's
unshared rows to float tolerance, with the "sdpa" and the "eager" attention, and a whole actor update lands on the
same weights.
"""

from __future__ import annotations

import copy

import pytest
import torch

from coach_reward.tiny_models import build_tiny_causal_lm
from coach_rl.config import CoachConfig
from coach_rl.prefix_update import group_rows, pack_groups
from coach_rl.trainer import CoachTrainer

K = 4


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def vowel_critic(states: list[str], actions: list[str]) -> list[float]:
    return [a.count("e") / (1 + len(a)) + 0.01 * len(s) for s, a in zip(states, actions)]


def _config(tmp_path, **overrides) -> CoachConfig:
    kwargs = dict(output_dir=str(tmp_path), use_cpu=True, report_to="none", save_strategy="no",
                  per_device_train_batch_size=8, num_generations=K, max_completion_length=8,
                  learning_rate=1e-3, lr_scheduler_type="constant", seed=7, bf16=False,
                  gradient_checkpointing=False)
    kwargs.update(overrides)
    return CoachConfig(**kwargs)


def _trainer(tmp_path, attention: str = "sdpa", **overrides) -> CoachTrainer:
    model, tok = build_tiny_causal_lm(seed=0)
    model.config._attn_implementation = attention
    return CoachTrainer(model, vowel_critic, _config(tmp_path, **overrides), tok)


def _batch(trainer: CoachTrainer) -> dict:
    """Two states (prompts of different length, so one is left padded), K replies each of different lengths."""
    tok = trainer.processing_class
    g = torch.Generator().manual_seed(3)
    prompts = [tok("Open the settings app and turn wifi on.")["input_ids"], tok("Tap OK.")["input_ids"]]
    width = max(len(p) for p in prompts)
    pad = tok.pad_token_id
    prompt_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts for _ in range(K)])
    prompt_mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts for _ in range(K)])
    c = 7
    completion_ids = torch.randint(5, 900, (2 * K, c), generator=g)
    lengths = torch.tensor([7, 3, 5, 1, 6, 7, 2, 4])
    completion_mask = (torch.arange(c)[None] < lengths[:, None]).long()
    completion_ids = completion_ids.masked_fill(completion_mask == 0, pad)
    return {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask, "completion_ids": completion_ids,
            "completion_mask": completion_mask, "advantages": torch.randn(2 * K, generator=g),
            "old_per_token_logps": -3.0 + 0.3 * torch.randn(2 * K, c, generator=g),
            "num_items_in_batch": completion_mask.sum()}


def _loss_and_grads(trainer: CoachTrainer, inputs: dict, shared: bool) -> tuple[torch.Tensor, dict]:
    trainer.args.share_prompt_update = shared
    model = trainer.model
    model.train()
    model.zero_grad(set_to_none=True)
    trainer.current_gradient_accumulation_steps = 1
    loss = trainer._compute_loss(model, inputs)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return loss.detach(), grads


def test_packing_groups_rows_by_prompt_and_blocks_the_segments():
    ids = torch.tensor([[0, 5, 6, 7, 9], [0, 5, 6, 8, 9], [4, 5, 6, 7, 0]])
    mask = torch.tensor([[0, 1, 1, 1, 1], [0, 1, 1, 1, 1], [1, 1, 1, 1, 0]])
    groups = group_rows(ids, mask, 2)
    assert groups == [[0, 1], [2]]
    packed = pack_groups(ids, mask, 2, groups)
    # state 0: prompt [5, 6] -> [5] | 6 7 | 6 8 ; state 1: prompt [4, 5, 6] -> [4, 5] | 6 7, padded
    assert packed["input_ids"].tolist() == [[5, 6, 7, 6, 8], [4, 5, 6, 7, 0]]
    assert packed["position_ids"].tolist() == [[0, 1, 2, 1, 2], [0, 1, 2, 3, 0]]
    assert packed["shift_labels"].tolist() == [[-100, 7, 9, 8, 9], [-100, -100, 7, -100, -100]]
    assert packed["where"] == {0: (0, 1), 1: (0, 3), 2: (1, 2)}
    m = packed["attention_mask"][0, 0].int().tolist()
    assert m[3] == [1, 0, 0, 1, 0]  # the second reply sees the prompt and itself, not the first reply
    assert m[4] == [1, 0, 0, 1, 1]
    assert packed["attention_mask"][1, 0, 4].int().tolist() == [0, 0, 0, 0, 1]  # padding: itself only


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
def test_shared_loss_and_gradients_equal_the_unshared_rows(tmp_path, attention):
    trainer = _trainer(tmp_path, attention)
    inputs = _batch(trainer)
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], 1)
    mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], 1)
    with torch.no_grad():
        trainer.args.share_prompt_update = False
        plain, plain_h, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, 7, compute_entropy=True)
        trainer.args.share_prompt_update = True
        shared, shared_h, _ = trainer._get_per_token_logps_and_entropies(trainer.model, ids, mask, 7,
                                                                           compute_entropy=True)
    assert trainer.shared_update_rows == 2 * K and trainer.shared_update_prompts == 2
    assert bool((plain[inputs["completion_mask"] == 1] < -1).all())  # real log-probs of a random model, not zeros
    torch.testing.assert_close(shared, plain, atol=2e-5, rtol=1e-5)
    torch.testing.assert_close(shared_h, plain_h, atol=2e-5, rtol=1e-5)
    assert bool((shared[inputs["completion_mask"] == 0] == 0).all())

    loss_plain, grads_plain = _loss_and_grads(trainer, inputs, shared=False)
    loss_shared, grads_shared = _loss_and_grads(trainer, inputs, shared=True)
    assert abs(float(loss_plain)) > 1e-3
    torch.testing.assert_close(loss_shared, loss_plain, atol=1e-6, rtol=1e-5)
    assert grads_shared.keys() == grads_plain.keys() and len(grads_plain) > 10
    total = torch.sqrt(sum((g ** 2).sum() for g in grads_plain.values()))
    assert float(total) > 1e-3
    for name, grad in grads_plain.items():
        torch.testing.assert_close(grads_shared[name], grad, atol=1e-6, rtol=1e-4, msg=name)


def test_an_actor_update_with_the_shared_prompt_lands_on_the_same_weights(tmp_path):
    rows = [{"prompt": [{"role": "user", "content": f"Open the app number {i}."}], "state": f"state {i}"}
            for i in range(4)]
    results = {}
    for shared in (False, True):
        # two micro-batches of 4 rows per generation: the group shuffle keeps each state's K rows together. One
        # optimiser step: it sums both micro-batches, so the order the two shuffles (groups vs rows) leave is moot.
        trainer = _trainer(tmp_path / str(shared), share_prompt_update=shared, per_device_train_batch_size=4,
                           gradient_accumulation_steps=2)
        torch.manual_seed(11)
        metrics = trainer.actor_update(rows, num_steps=1, log=False)
        results[shared] = (copy.deepcopy(trainer.model.state_dict()), metrics, trainer.shared_update_rows)
    (plain, m_plain, n_plain), (shared, m_shared, n_shared) = results[False], results[True]
    assert n_plain == 0 and n_shared == 2 * 4  # micro-batches x rows: every row shared its prompt
    assert abs(m_shared["actor/loss"] - m_plain["actor/loss"]) < 1e-5
    moved = max(float((plain[k] - build_tiny_causal_lm(seed=0)[0].state_dict()[k]).abs().max()) for k in plain)
    assert moved > 1e-4
    for key in plain:
        torch.testing.assert_close(shared[key], plain[key], atol=2e-5, rtol=1e-4)
