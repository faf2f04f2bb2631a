"""Interpreters of the ONNX nn ops (see __init__.py for the op signature)."""
import torch
import torch.nn.functional as F

from . import register
