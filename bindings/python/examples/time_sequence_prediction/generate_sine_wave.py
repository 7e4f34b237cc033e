# pytorch/examples time_sequence_prediction/generate_sine_wave.py (commit 77f55b9, August 2025), changed only in its imports:
# `torch` is tensor (bindings/python), `torchvision` is tensor.vision; the two lines after
# this comment put the checkout's package on the path when it is not installed.
# pytorch/examples is BSD-3-Clause licensed, Copyright (c) 2017 the PyTorch contributors.
import os, sys  # noqa: E401
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np
import tensor as torch

np.random.seed(2)

T = 20
L = 1000
N = 100

x = np.empty((N, L), 'int64')
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype('float64')
torch.save(data, open('traindata.pt', 'wb'))
