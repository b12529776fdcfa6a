"""Uses the GPU inside the functions: every call fails where grading has no GPU."""
import numpy as np
import torch

device = torch.device("cuda")


def project(X, W):
    return (torch.as_tensor(X, device=device) @ torch.as_tensor(W, device=device)).cpu()
