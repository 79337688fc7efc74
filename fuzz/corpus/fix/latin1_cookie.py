# -*- coding: latin-1 -*-
"""Café: latin-1 bytes before and after the edits."""
import torch

name = "größe"  # été
torch.cuda.synchronize()
label = "à bientôt"
