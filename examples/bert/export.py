#!/usr/bin/env python3
"""Export a BERT style masked-LM model (forward + loss) to ONNX for pdc.

Token + position + token-type embeddings, post-LN encoder blocks with
bidirectional attention and a padding mask given as a graph input, a GELU
MLP, and a masked-LM head tied to the token embedding; the loss is
F.cross_entropy with ignore_index=-100 on the unmasked positions, inside
forward(idx, token_type, attention_mask, labels). Dropout (--dropout, as
in BERT: after the embedding LayerNorm, on the attention probabilities and on
each residual branch) is exported as Dropout nodes in TRAINING mode even at
p=0; --eval drops them and deduplicates identical initializers behind
Identity nodes; --dynamic makes the batch and sequence axes symbolic.
Writes a synthetic dataset (idx, token_type, attention_mask, labels .npy)
whose sequences end in random padding and whose masked positions are
predictable from their neighbours. examples/bert/README.md lists the ops of
each variant. Prints the op counts of the export unless --quiet.

Run with /usr/bin/python3 (Debian's torch 1.13 and onnx 1.12).
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

MASK_TOKEN = 1


class Block(nn.Module):
    """A post-LN encoder block."""

    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads = heads
        self.drop = nn.Dropout(dropout)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x, bias):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        att = self.drop(F.softmax(att + bias, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = self.ln1(x + self.drop(self.proj(y)))
        return self.ln2(x + self.drop(self.out(F.gelu(self.fc(x)))))


class Bert(nn.Module):
    def __init__(self, vocab, block, layers, d, heads, dropout=0.0):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(block, d)
        self.typ = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(d, heads, dropout) for _ in range(layers)])
        self.transform = nn.Linear(d, d)
        self.ln_head = nn.LayerNorm(d)
        self.decoder_bias = nn.Parameter(torch.zeros(vocab))
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, idx, token_type, attention_mask, labels):
        b, t = idx.shape
        pos = torch.arange(t, dtype=torch.long).unsqueeze(0)
        x = self.drop(self.ln(self.tok(idx) + self.pos(pos) + self.typ(token_type)))
        # Padding positions get -10000 before the softmax of every query.
        bias = (1.0 - attention_mask.unsqueeze(1).unsqueeze(2)) * -10000.0
        for block in self.blocks:
            x = block(x, bias)
        h = self.ln_head(F.gelu(self.transform(x)))
        logits = h @ self.tok.weight.t() + self.decoder_bias  # tied head
        return F.cross_entropy(logits.view(-1, logits.size(-1)),
                               labels.view(-1), ignore_index=-100)


def write_dataset(out_dir, samples, seq, vocab, seed):
    """Arithmetic token runs (each token = previous + step mod vocab), padded
    at the end; 15% of the real tokens masked with labels, the rest -100."""
    rng = np.random.default_rng(seed)
    idx = np.zeros((samples, seq), np.int64)
    typ = np.zeros((samples, seq), np.int64)
    mask = np.zeros((samples, seq), np.float32)
    labels = np.full((samples, seq), -100, np.int64)
    for s in range(samples):
        length = int(rng.integers(seq // 2, seq + 1))
        start, step = int(rng.integers(2, vocab)), int(rng.integers(1, 4))
        tokens = 2 + (start + step * np.arange(length)) % (vocab - 2)
        idx[s, :length] = tokens
        typ[s, length // 2:length] = 1
        mask[s, :length] = 1.0
        chosen = rng.random(length) < 0.15
        chosen[int(rng.integers(length))] = True
        labels[s, :length][chosen] = tokens[chosen]
        idx[s, :length][chosen] = MASK_TOKEN
    os.makedirs(out_dir, exist_ok=True)
    for name, data in (("idx", idx), ("token_type", typ),
                       ("attention_mask", mask), ("labels", labels)):
        np.save(os.path.join(out_dir, name + ".npy"), data)


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
    p.add_argument("--out", default="bert.onnx")
    p.add_argument("--opset", type=int, default=13, choices=range(13, 18))
    p.add_argument("--batch", type=int, default=4,
                   help="static batch of the export (the microbatch)")
    p.add_argument("--seq", type=int, default=8, help="sequence length T")
    p.add_argument("--block", type=int, help="rows of the position embedding "
                   "(default: --seq)")
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=32)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--eval", action="store_true", help="export in eval mode")
    p.add_argument("--dynamic", action="store_true",
                   help="dynamic batch and sequence axes")
    p.add_argument("--data-dir", help="write the four NAME.npy inputs here")
    p.add_argument("--samples", type=int, default=256, help="dataset size")
    p.add_argument("--seed", type=int, default=0,
                   help="model seed (the dataset uses seed + 1)")
    p.add_argument("--quiet", action="store_true", help="do not print the op counts")
    a = p.parse_args()
    block = a.block or a.seq
    if a.seq > block or a.embd % a.heads:
        raise SystemExit("error: need --seq <= --block and --heads dividing --embd")
    torch.manual_seed(a.seed)
    model = Bert(a.vocab, block, a.layers, a.embd, a.heads, a.dropout)
    ids = torch.zeros(a.batch, a.seq, dtype=torch.long)
    mask = torch.ones(a.batch, a.seq)
    names = ["idx", "token_type", "attention_mask", "labels"]
    mode = torch.onnx.TrainingMode.EVAL if a.eval else torch.onnx.TrainingMode.TRAINING
    axes = {n: {0: "B", 1: "T"} for n in names} if a.dynamic else None
    torch.onnx.export(model, (ids, ids, mask, ids), a.out, opset_version=a.opset,
                      training=mode, do_constant_folding=False,
                      input_names=names, output_names=["loss"], dynamic_axes=axes)
    if a.data_dir:
        write_dataset(a.data_dir, a.samples, a.seq, a.vocab, a.seed + 1)
    if not a.quiet:
        describe(a.out)


if __name__ == "__main__":
    main()
