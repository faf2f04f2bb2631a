#!/usr/bin/env python3
"""Export a GPT-2 style model (forward + loss) to ONNX for pdc.

Token + position embeddings, pre-LN blocks with causal self-attention (fused
qkv Linear, a registered tril mask applied with masked_fill, softmax,
dropout), a GELU MLP (exported by torch 1.13 as the Erf decomposition), a
final LayerNorm and an LM head tied to the token embedding; the loss is
F.cross_entropy inside forward(idx, targets). Also writes a learnable
synthetic token dataset (idx.npy, targets.npy: int64 [samples, T], targets
are idx shifted by one) drawn from a fixed random Markov chain.

Run with /usr/bin/python3 (Debian's torch 1.13 and onnx 1.12).
"""
import argparse
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
    def __init__(self, vocab, block, layers, d, heads, dropout):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.blocks = nn.ModuleList(
            [Block(d, heads, block, dropout) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight  # tied
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx, targets):
        b, t = idx.shape
        pos = torch.arange(t, dtype=torch.long).unsqueeze(0)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               targets.view(-1))


def write_dataset(out_dir, samples, seq, vocab, seed):
    """A Markov chain with a few likely successors per token."""
    rng = np.random.default_rng(seed)
    trans = rng.dirichlet(np.full(vocab, 0.1), size=vocab)
    stream = [int(rng.integers(vocab))]
    for _ in range(samples * seq + 1):
        stream.append(int(rng.choice(vocab, p=trans[stream[-1]])))
    tokens = np.array(stream, dtype=np.int64)
    idx = np.stack([tokens[i * seq:(i + 1) * seq] for i in range(samples)])
    tgt = np.stack([tokens[i * seq + 1:(i + 1) * seq + 1] for i in range(samples)])
    os.makedirs(out_dir, exist_ok=True)
    np.save(os.path.join(out_dir, "idx.npy"), idx)
    np.save(os.path.join(out_dir, "targets.npy"), tgt)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="gpt.onnx")
    p.add_argument("--opset", type=int, default=13, choices=range(13, 18))
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=32)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--eval", action="store_true", help="export in eval mode")
    p.add_argument("--dynamic", action="store_true",
                   help="dynamic batch and sequence axes")
    p.add_argument("--data-dir")
    p.add_argument("--samples", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    model = GPT(a.vocab, a.seq, a.layers, a.embd, a.heads, a.dropout)
    idx = torch.zeros(a.batch, a.seq, dtype=torch.long)
    mode = torch.onnx.TrainingMode.EVAL if a.eval else torch.onnx.TrainingMode.TRAINING
    axes = {"idx": {0: "B", 1: "T"}, "targets": {0: "B", 1: "T"}} if a.dynamic else None
    torch.onnx.export(model, (idx, idx), a.out, opset_version=a.opset,
                      training=mode, do_constant_folding=False,
                      input_names=["idx", "targets"], output_names=["loss"],
                      dynamic_axes=axes)
    if a.data_dir:
        write_dataset(a.data_dir, a.samples, a.seq, a.vocab, a.seed + 1)
    if not a.quiet:
        graph = onnx.load(a.out).graph
        counts = {}
        for n in graph.node:
            counts[n.op_type] = counts.get(n.op_type, 0) + 1
        print(f"{a.out}: opset {a.opset}, {len(graph.node)} nodes")
        print("ops:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
