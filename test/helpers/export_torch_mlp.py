#!/usr/bin/env python3
# ===- export_torch_mlp.py - Export a small torch MLP with its loss ------=== #
#
# Exports Linear(8,16) -> ReLU -> Linear(16,10) -> F.cross_entropy with
# torch.onnx.export in TRAINING mode, as a user would, for the importer's
# end-to-end test. Needs Debian's /usr/bin/python3 (torch 1.13, onnx 1.12).
#
# ===---------------------------------------------------------------------=== #

import argparse
import os
import sys
import warnings


def _reexec_with_debian_python():
    """lit's %python may be a python3 without Debian's onnx/torch packages;
    fall back to /usr/bin/python3, which has them."""
    debian = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(debian) and \
            os.path.exists(debian):
        os.execv(debian, [debian] + sys.argv)


try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ModuleNotFoundError:
    _reexec_with_debian_python()
    raise


class MLP(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.fc1 = nn.Linear(8, 16, bias=bias)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x, y):
        return F.cross_entropy(self.fc2(F.relu(self.fc1(x))), y)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output")
    parser.add_argument("--opset", type=int, default=13)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--dynamic-batch", action="store_true",
                        help="export dim 0 of x and y as symbolic 'B'")
    parser.add_argument("--no-bias", action="store_true",
                        help="fc1 without bias (exported as Transpose+MatMul)")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = MLP(bias=not args.no_bias)
    x = torch.randn(args.batch, 8)
    y = torch.randint(0, 10, (args.batch,))
    axes = {"x": {0: "B"}, "y": {0: "B"}} if args.dynamic_batch else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x, y), args.output,
                          opset_version=args.opset,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False,
                          input_names=["x", "y"], output_names=["loss"],
                          dynamic_axes=axes)


if __name__ == "__main__":
    main()
