#!/usr/bin/env python3
"""Export a GPT-2 style model (forward + loss) to ONNX for pdc.

Token + position embeddings, pre-LN blocks with causal self-attention (fused
qkv Linear, a registered tril mask applied with masked_fill, softmax,
dropout), a GELU MLP (exported by torch 1.13 as the Erf decomposition), a
final LayerNorm and an LM head tied to the token embedding; the loss is
F.cross_entropy inside forward(idx, targets). GPT-2 initialisation (normal,
std 0.02, for every matrix).

Also writes a learnable synthetic token dataset drawn from a fixed random
Markov chain (each token has a few likely successors): --data-dir gets
idx.npy and targets.npy (int64 [samples, seq], targets = idx shifted by
one), --data-bin the same stream as nanoGPT's flat uint16 token file.

Exports at opset 13 (LayerNorm decomposed) to 17 (LayerNormalization), in
TRAINING mode (every parameter keeps its initializer; Dropout nodes even at
p=0) or with --eval (no Dropout; identical initializers deduplicated behind
Identity nodes), with static shapes or --dynamic batch and sequence axes
(Shape/Gather/Range arithmetic). examples/gpt/README.md lists the ops of
each variant. Prints the op counts of the export unless --quiet.

Run with /usr/bin/python3 (Debian's torch 1.13 and onnx 1.12);
export_torch2.py exports the same model with today's torch 2.x exporter.
"""
import argparse
import collections
import math
import os
import sys

try:
    import numpy as np
    import onnx
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ModuleNotFoundError:
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)


class Block(nn.Module):
    """A pre-LN transformer block."""

    def __init__(self, d, heads, block, dropout):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(block, block))
                             .view(1, 1, block, block))

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        return self.drop(self.proj(y))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)))))


class GPT(nn.Module):
    """GPT-2: forward(idx, targets) returns the mean next-token cross-entropy."""

    def __init__(self, vocab, block, layers, d, heads, dropout):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            [Block(d, heads, block, dropout) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight  # tied
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx, targets):
        b, t = idx.shape
        pos = torch.arange(t, dtype=torch.long).unsqueeze(0)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               targets.view(-1))


# ----------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------

def token_stream(length, vocab, seed):
    """A Markov chain with a few likely successors per token (int64 [length])."""
    rng = np.random.default_rng(seed)
    trans = rng.dirichlet(np.full(vocab, 0.1), size=vocab)
    stream = [int(rng.integers(vocab))]
    for _ in range(length - 1):
        stream.append(int(rng.choice(vocab, p=trans[stream[-1]])))
    return np.array(stream, dtype=np.int64)


def write_dataset(out_dir, samples, seq, vocab, seed):
    """idx.npy and targets.npy: consecutive windows of the token stream."""
    tokens = token_stream(samples * seq + 1, vocab, seed)
    idx = tokens[:samples * seq].reshape(samples, seq)
    tgt = tokens[1:samples * seq + 1].reshape(samples, seq)
    os.makedirs(out_dir, exist_ok=True)
    np.save(os.path.join(out_dir, "idx.npy"), idx)
    np.save(os.path.join(out_dir, "targets.npy"), tgt)


def write_token_bin(path, samples, seq, vocab, seed):
    """The same stream as nanoGPT's train.bin: raw little-endian uint16."""
    if vocab > 65536:
        raise SystemExit("error: --data-bin needs --vocab <= 65536 (uint16 tokens)")
    tokens = token_stream(samples * seq + 1, vocab, seed)
    tokens.astype("<u2").tofile(path)


# ----------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------

def add_model_args(p):
    """Model and data options shared with export_torch2.py."""
    p.add_argument("--batch", type=int, default=4,
                   help="static batch of the export (the microbatch)")
    p.add_argument("--seq", type=int, default=8, help="sequence length T")
    p.add_argument("--block", type=int, help="context size of the position "
                   "embedding and mask (default: --seq); the mask is sliced to T")
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=32)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--data-dir", help="write idx.npy and targets.npy here")
    p.add_argument("--data-bin", help="write a nanoGPT-style uint16 token file")
    p.add_argument("--samples", type=int, default=256, help="dataset size")
    p.add_argument("--seed", type=int, default=0,
                   help="model seed (the dataset uses seed + 1)")
    p.add_argument("--quiet", action="store_true", help="do not print the op counts")


def build_model(a):
    """The GPT of the parsed options, deterministically initialised."""
    block = a.block or a.seq
    if a.seq > block:
        raise SystemExit(f"error: --seq {a.seq} exceeds --block {block}")
    if a.embd % a.heads:
        raise SystemExit(f"error: --embd {a.embd} is not a multiple of --heads")
    torch.manual_seed(a.seed)
    return GPT(a.vocab, block, a.layers, a.embd, a.heads, a.dropout)


def write_data(a):
    """Write the dataset files the options ask for."""
    if a.data_dir:
        write_dataset(a.data_dir, a.samples, a.seq, a.vocab, a.seed + 1)
    if a.data_bin:
        write_token_bin(a.data_bin, a.samples, a.seq, a.vocab, a.seed + 1)


def describe(path):
    """Print the opset, node count and op counts of an exported model."""
    model = onnx.load(path)
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    ops = collections.Counter(n.op_type for n in model.graph.node)
    print(f"{path}: opset {opset}, {len(model.graph.node)} nodes, "
          f"{len(model.graph.initializer)} initializers")
    print("ops:", ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="gpt.onnx")
    p.add_argument("--opset", type=int, default=13, choices=range(13, 18))
    p.add_argument("--eval", action="store_true", help="export in eval mode")
    p.add_argument("--dynamic", action="store_true",
                   help="dynamic batch and sequence axes")
    add_model_args(p)
    a = p.parse_args()
    model = build_model(a)
    idx = torch.zeros(a.batch, a.seq, dtype=torch.long)
    mode = torch.onnx.TrainingMode.EVAL if a.eval else torch.onnx.TrainingMode.TRAINING
    axes = {"idx": {0: "B", 1: "T"}, "targets": {0: "B", 1: "T"}} if a.dynamic else None
    torch.onnx.export(model, (idx, idx), a.out, opset_version=a.opset,
                      training=mode, do_constant_folding=False,
                      input_names=["idx", "targets"], output_names=["loss"],
                      dynamic_axes=axes)
    write_data(a)
    if not a.quiet:
        describe(a.out)


if __name__ == "__main__":
    main()
