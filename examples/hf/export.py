#!/usr/bin/env python3
"""Export an unmodified Hugging Face transformers model with its own loss to ONNX.

--family picks a tiny model built from its config with random weights
(seeded; nothing is downloaded):
  gpt2   GPT2LMHeadModel (2 layers, n_embd 64, 4 heads, vocab 128, 64
         positions; Conv1D projections exported as Gemm, tanh GELU; LM head
         tied to wte)
  llama  LlamaForCausalLM (2 layers, hidden 64, 4 heads and 2 key/value
         heads: grouped-query attention; RMSNorm spelled out, rotary
         embeddings (Cos/Sin), SiLU gated MLP, untied LM head)
  bert   BertForMaskedLM (2 layers, hidden 64, 4 heads, intermediate 128;
         padding mask input; decoder tied to the word embedding)
  mistral MistralForCausalLM (Llama's blocks; grouped-query attention with
         a sliding window of 8 positions (64 at --size bench): a band
         mask, not the causal triangle, when the sequence is longer)
  qwen2  Qwen2ForCausalLM (Llama's blocks with biased Q, K and V
         projections; LM head tied to the embedding, as in Qwen2-0.5B)
  neox   GPTNeoXForCausalLM (fused QKV projection laid out head by head,
         rotary embedding on half of each head's dims (partial rotary),
         parallel residual, LayerNorm, exact GELU, untied LM head)
  gemma  GemmaForCausalLM (the embedding scaled by sqrt(hidden), RMS norms
         scaled by 1 + w, grouped-query attention, GeGLU MLP with tanh
         GELU, LM head tied to the embedding)
  phi3   Phi3ForCausalLM (one fused QKV projection, grouped-query
         attention, rotary embedding in the partial form with every column
         rotated, one fused gate and up projection chunked for the SwiGLU,
         RMSNorm, untied LM head)
(--size bench: 4 layers, hidden 256, 4 heads (2 key/value heads where the
family groups queries),
MLP 1024 wide, vocab 4096, 128 positions, for bench/hf_vs_torch.py.)
The model is not changed: a thin wrapper's forward(input_ids, labels)
returns `model(input_ids=..., labels=...).loss` (BERT: forward(input_ids,
attention_mask, labels)), the loss transformers computes itself: causal LMs
shift the labels inside (padding them with -100: an int64 Pad), BERT
ignores label -100. Causal LMs are built with use_cache=False. Parameter
names carry the wrapper's "model." prefix.

--mask (causal LMs): called without an attention mask ("none"),
transformers looks for packed sequences in the position ids with torch.diff
and cumsum; the dynamo exporter exports that (CumSum, GatherND, ...: all
constant for static shapes), the TorchScript exporter fails with
"Exporting the operator 'aten::diff' to ONNX opset version 17 is not
supported" whatever the attention implementation. "ones" passes
torch.ones_like(input_ids) as the mask (what a user does to get past that
error; the default with torchscript), "input" makes the mask a graph input
(and pads the tails of some sequences in the data).

--attn: attn_implementation "sdpa" (default: transformers' own default,
and both exporters export it: scaled_dot_product_attention decomposed into
MatMul/Softmax with the scale split as Sqrt on q and k, and an IsNaN + Where
that zeroes fully masked rows) or "eager" (the plain matmul/softmax
attention of the modeling files).

--exporter picks the exporter of the venv's torch 2.x:
  torchscript  torch.onnx.export(..., dynamo=False), opset 17, TRAINING
               mode and do_constant_folding=False: every parameter is an
               initializer under its PyTorch name (EVAL would deduplicate
               equal initializers behind Identity nodes), a tied weight one
               initializer (named after the embedding); Dropout nodes even
               at p=0 (not inside sdpa).
  dynamo       torch.onnx.export(..., dynamo=True, optimize=False), opset
               18, one file (external_data=False); the module in eval mode,
               or in train mode with --dropout > 0. A tied weight is one
               initializer named after the head (lm_head.weight,
               cls.predictions.decoder.weight); buffers become initializers
               too (Llama's float rotary inv_freq, BERT's int64 position
               and token type ids).
--dropout p sets every dropout probability of the config (default 0).

The data directory gets one NAME.npy per graph input (int64, first axis the
sample): windows of a token stream drawn from a fixed random Markov chain
(tokens 1..vocab-2, a few likely successors each, so the loss can fall well
below log(vocab)). Causal LMs: labels = input_ids (-100 on padding). BERT:
15% of the positions of each sequence (at least one) get labels, 80% of
them become the mask token vocab-1, 10% a random token, 10% stay; labels
are -100 elsewhere; half the sequences end in padding (token 0,
attention_mask 0).

Prints the op counts, the initializers and the graph inputs with their
dtypes unless --quiet. Runs with the venv of scripts/setup-venv.sh
(transformers, torchvision, torch 2.x, onnxscript): re-executes itself with
$PDC_VENV/bin/python (default ~/.cache/pdc-venv) when transformers is not
importable. test/helpers/check_hf_oracle.py checks onnx_torch's loss of
each export against the transformers module.
"""
import argparse
import collections
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pdc_venv import reexec_in_venv  # noqa: E402

if __name__ == "__main__":
    reexec_in_venv("transformers")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

ATTN = "sdpa"

# Model sizes: "tiny" for the tests (a few seconds to train), "bench" for
# bench/hf_vs_torch.py (the size of bench/perf_suite.py's small GPT).
SIZES = {
    # GPT-2's MLP is 4 x hidden wide whatever "inner" says.
    "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=2, inner=128,
                 vocab=128, positions=64, window=8),
    "bench": dict(layers=4, hidden=256, heads=4, kv_heads=2, inner=1024,
                  vocab=4096, positions=128, window=64),
}


def config_of(family, dropout, attn, size="tiny", kv_heads=None):
    """The config of `family` at `size` (SIZES): every dropout probability
    = dropout, attention implementation attn, `kv_heads` key/value heads
    where the family groups queries (default: the size's)."""
    z = dict(SIZES[size])
    if kv_heads:
        z["kv_heads"] = kv_heads
    if family == "gpt2":
        return transformers.GPT2Config(
            n_layer=z["layers"], n_embd=z["hidden"], n_head=z["heads"],
            vocab_size=z["vocab"], n_positions=z["positions"],
            resid_pdrop=dropout, embd_pdrop=dropout, attn_pdrop=dropout,
            bos_token_id=0, eos_token_id=0, use_cache=False,
            attn_implementation=attn)
    causal = dict(
        hidden_size=z["hidden"], intermediate_size=z["inner"],
        num_hidden_layers=z["layers"], num_attention_heads=z["heads"],
        vocab_size=z["vocab"], max_position_embeddings=z["positions"],
        attention_dropout=dropout, bos_token_id=0, eos_token_id=0,
        use_cache=False, attn_implementation=attn)
    if family == "llama":
        return transformers.LlamaConfig(num_key_value_heads=z["kv_heads"],
                                        **causal)
    if family == "mistral":
        return transformers.MistralConfig(
            num_key_value_heads=z["kv_heads"],
            head_dim=z["hidden"] // z["heads"], sliding_window=z["window"],
            **causal)
    if family == "qwen2":
        return transformers.Qwen2Config(num_key_value_heads=z["kv_heads"],
                                        tie_word_embeddings=True, **causal)
    if family == "gemma":
        return transformers.GemmaConfig(
            num_key_value_heads=z["kv_heads"],
            head_dim=z["hidden"] // z["heads"],
            hidden_activation="gelu_pytorch_tanh", **causal)
    if family == "phi3":
        return transformers.Phi3Config(num_key_value_heads=z["kv_heads"],
                                       pad_token_id=0,
                                       resid_pdrop=dropout,
                                       embd_pdrop=dropout, **causal)
    if family == "neox":
        return transformers.GPTNeoXConfig(
            hidden_dropout=dropout, use_parallel_residual=True,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                             "partial_rotary_factor": 0.5},
            **causal)
    return transformers.BertConfig(
        hidden_size=z["hidden"], num_hidden_layers=z["layers"],
        num_attention_heads=z["heads"], intermediate_size=z["inner"],
        vocab_size=z["vocab"], max_position_embeddings=z["positions"],
        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
        pad_token_id=0, attn_implementation=attn)


MODEL_CLASSES = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM",
                 "bert": "BertForMaskedLM", "mistral": "MistralForCausalLM",
                 "qwen2": "Qwen2ForCausalLM", "neox": "GPTNeoXForCausalLM",
                 "gemma": "GemmaForCausalLM", "phi3": "Phi3ForCausalLM"}


def build_model(family, dropout, seed, attn=ATTN, size="tiny", kv_heads=None):
    """The transformers model of `family`, randomly initialised from seed
    (its own initialisation, as `Model(config)` does)."""
    torch.manual_seed(seed)
    cls = getattr(transformers, MODEL_CLASSES[family])
    return cls(config_of(family, dropout, attn, size, kv_heads))


class CausalLMLoss(torch.nn.Module):
    """forward(input_ids, labels) -> the model's own (shifted) LM loss, called
    without an attention mask (mask "none") or with an all-ones one made
    inside (mask "ones")."""

    def __init__(self, model, ones_mask):
        super().__init__()
        self.model = model
        self.ones_mask = ones_mask

    def forward(self, input_ids, labels):
        if self.ones_mask:
            return self.model(input_ids=input_ids, labels=labels,
                              attention_mask=torch.ones_like(input_ids)).loss
        return self.model(input_ids=input_ids, labels=labels).loss


class MaskedLoss(torch.nn.Module):
    """forward(input_ids, attention_mask, labels) -> the model's own loss
    (BERT's masked-LM loss, or a causal LM's with mask "input")."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, labels):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          labels=labels).loss


def mask_mode(family, exporter, mask):
    """Resolve --mask: BERT always takes the mask as an input; "auto" is
    "ones" for the TorchScript exporter (without a mask transformers checks
    the position ids for packed sequences with torch.diff, which it cannot
    export) and "none" for dynamo."""
    if family == "bert":
        return "input"
    if mask == "auto":
        return "ones" if exporter == "torchscript" else "none"
    return mask


def wrap(model, mask):
    """The loss module around `model` (which stays unchanged) for a resolved
    mask mode."""
    if mask == "input":
        return MaskedLoss(model)
    return CausalLMLoss(model, mask == "ones")


# ----------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------

def token_stream(length, vocab, seed):
    """A Markov chain with a few likely successors per token (int64 [length])."""
    rng = np.random.default_rng(seed)
    trans = rng.dirichlet(np.full(vocab, 0.1), size=vocab)
    cum = np.cumsum(trans, axis=1)
    u = rng.random(length)
    stream = np.empty(length, dtype=np.int64)
    stream[0] = rng.integers(vocab)
    for i in range(1, length):
        stream[i] = min(np.searchsorted(cum[stream[i - 1]], u[i]), vocab - 1)
    return stream


def padded_lengths(rng, samples, seq):
    """Half the sequences full, the others padded to a length in [seq/2, seq]."""
    return np.where(rng.random(samples) < 0.5, seq,
                    rng.integers(seq // 2, seq + 1, samples))


def mask_tokens(rng, ids, lengths, mask_token):
    """BERT's masking, in place on ids: 15% of each sequence's positions (at
    least one) get labels; 80% of them become mask_token, 10% a random token,
    10% stay. Returns the labels (-100 where not masked)."""
    labels = np.full_like(ids, -100)
    for s, n in enumerate(lengths):
        picked = rng.random(n) < 0.15
        picked[rng.integers(n)] = True
        pos = np.nonzero(picked)[0]
        labels[s, pos] = ids[s, pos]
        roll = rng.random(len(pos))
        ids[s, pos[roll < 0.8]] = mask_token
        rand = pos[(roll >= 0.8) & (roll < 0.9)]
        ids[s, rand] = rng.integers(1, mask_token, len(rand))
    return labels


def make_dataset(family, mask, samples, seq, seed, vocab=SIZES["tiny"]["vocab"]):
    """{graph input name: int64 array [samples, seq]}, in the order of the
    graph inputs. Token 0 is the pad token, vocab-1 BERT's mask token; the
    others come from the Markov chain."""
    rng = np.random.default_rng(seed)
    ids = token_stream(samples * seq, vocab - 2, seed).reshape(samples, seq) + 1
    lengths = padded_lengths(rng, samples, seq) if mask == "input" else \
        np.full(samples, seq)
    attention = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)
    if family == "bert":
        labels = mask_tokens(rng, ids, lengths, vocab - 1)
    else:
        labels = np.where(attention == 1, ids, -100)
    ids[attention == 0] = 0
    data = {"input_ids": ids}
    if mask == "input":
        data["attention_mask"] = attention
    data["labels"] = labels
    return data


def write_dataset(out_dir, data):
    """One NAME.npy per graph input."""
    os.makedirs(out_dir, exist_ok=True)
    for name, value in data.items():
        np.save(os.path.join(out_dir, name + ".npy"), value)


# ----------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------

def export(module, example, path, exporter, dropout):
    """Export module(*example.values()) -> loss to path with static shapes."""
    names = list(example)
    args = tuple(torch.from_numpy(v.copy()) for v in example.values())
    if exporter == "torchscript":
        try:
            torch.onnx.export(module, args, path, dynamo=False, opset_version=17,
                              training=torch.onnx.TrainingMode.TRAINING,
                              do_constant_folding=False,
                              input_names=names, output_names=["loss"])
        except torch.onnx.errors.UnsupportedOperatorError as e:
            if "aten::diff" not in str(e):
                raise
            sys.exit(f"error: {e}\n(transformers' packed-sequence check of a "
                     f"causal LM called without an attention mask: use --mask "
                     f"ones or --mask input)")
    else:
        module.train(dropout > 0)
        torch.onnx.export(module, args, path, dynamo=True, optimize=False,
                          opset_version=18, external_data=False,
                          input_names=names, output_names=["loss"],
                          verbose=False)


def describe(path):
    """Print the opset, op counts, initializers and graph inputs of path."""
    model = onnx.load(path)
    graph = model.graph
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    ops = collections.Counter(n.op_type for n in graph.node)
    print(f"{path}: opset {opset}, {len(graph.node)} nodes, "
          f"{len(graph.initializer)} initializers")
    print("ops:", ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))
    print("initializers:", ", ".join(
        f"{t.name}{list(t.dims)}" for t in graph.initializer))
    inits = {t.name for t in graph.initializer}
    dtype = onnx.TensorProto.DataType.Name
    print("inputs:", ", ".join(
        f"{i.name} {dtype(i.type.tensor_type.elem_type).lower()}"
        f"{[d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim]}"
        for i in graph.input if i.name not in inits))


def parse_args():
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--family", choices=sorted(MODEL_CLASSES), default="gpt2")
    p.add_argument("--exporter", choices=["torchscript", "dynamo"],
                   default="torchscript")
    p.add_argument("--out", help="ONNX file to write (default FAMILY-EXPORTER.onnx)")
    p.add_argument("--data-dir", help="write one NAME.npy per graph input here")
    p.add_argument("--batch", type=int, default=2,
                   help="static batch of the export (the microbatch)")
    p.add_argument("--seq", type=int, default=16,
                   help="sequence length (<= the size's positions: 64 tiny, 128 bench)")
    p.add_argument("--size", choices=sorted(SIZES), default="tiny",
                   help="tiny: 2 layers, hidden 64, vocab 128 (the tests); bench: "
                   "4 layers, hidden 256, 4 heads, inner 1024, vocab 4096")
    p.add_argument("--samples", type=int, default=64, help="dataset size")
    p.add_argument("--seed", type=int, default=0,
                   help="model seed (the dataset uses seed + 1)")
    p.add_argument("--mask", choices=["auto", "none", "ones", "input"],
                   default="auto", help="causal LMs: call the model without "
                   "an attention mask (none), with an all-ones mask made in the "
                   "graph (ones) or with a mask input (input); auto: ones for "
                   "torchscript, none for dynamo. BERT: always input")
    p.add_argument("--attn", choices=["eager", "sdpa"], default=ATTN,
                   help="transformers' attn_implementation")
    p.add_argument("--dropout", type=float, default=0.0,
                   help="every dropout probability of the config")
    p.add_argument("--kv-heads", type=int,
                   help="key/value heads of the families with grouped-query "
                   "attention (default 2; 1: multi-query attention)")
    p.add_argument("--quiet", action="store_true",
                   help="print nothing (no op counts, no exporter warnings)")
    a = p.parse_args()
    positions = SIZES[a.size]["positions"]
    if not 2 <= a.seq <= positions:
        p.error(f"--seq must be in [2, {positions}] (the position table has "
                f"{positions} rows)")
    a.out = a.out or f"{a.family}-{a.exporter}.onnx"
    return a


def main():
    a = parse_args()
    if a.quiet:
        warnings.filterwarnings("ignore")
        transformers.logging.set_verbosity_error()
    mask = mask_mode(a.family, a.exporter, a.mask)
    module = wrap(build_model(a.family, a.dropout, a.seed, a.attn, a.size,
                              a.kv_heads), mask)
    data = make_dataset(a.family, mask, max(a.samples, a.batch), a.seq, a.seed + 1,
                        SIZES[a.size]["vocab"])
    export(module, {k: v[:a.batch] for k, v in data.items()}, a.out,
           a.exporter, a.dropout)
    if a.data_dir:
        write_dataset(a.data_dir, data)
    if not a.quiet:
        describe(a.out)


if __name__ == "__main__":
    main()
