"""A small character-level GPT: pre-LayerNorm blocks of masked multi-head attention and an MLP.

    x = tok_emb(idx) + pos_emb(t)     (pos_emb learned, the course's sinusoidal table / √d_model, or left out)
    for each block:   x = x + MHA(LN(x))      (left out when config.attention is False)
                      x = x + FFN(LN(x))
    logits = lm_head(LN(x))

The attention is the course's masked multi-head attention (`mha.reference`), with the per-head
W_Q, W_K, W_V side by side in one fused (3·C, C) projection and no biases, exactly Y = Concat(heads) W_O.
Two kernels compute the same attention, chosen per device by what was measured there (`KERNEL_FOR_DEVICE`):
- "explicit": the course's steps one by one (one batched matmul with the mask added, softmax, one
  batched matmul). On a CPU it trains faster than `scaled_dot_product_attention` at these sizes
  (benchmarks/train_throughput.py measures it), and its softmax matrices are the heat-maps' weights.
- "sdpa": PyTorch's fused `scaled_dot_product_attention(is_causal=True)`, for CUDA (flash and
  memory-efficient kernels; `train_throughput.py --device cuda` compares them). It never forms A, so
  `attention_weights()` always runs the explicit steps, whatever kernel trained the model.
Tests pin both kernels and the weights to the float64 reference (both run on a CPU).

Two options exist for the lab's controlled runs (mha.lab), each one change from the default model:
`scale_scores=False` drops the 1/√d_k from the scores, and `positions` picks learned positions (the
default), the course's fixed sinusoidal table, or none. The learned table is drawn after every other
weight, so from one seed the three kinds of model share every other weight, draw for draw.

Token and position signals enter on the scales "Attention Is All You Need" (section 3.4) gives them: it
multiplies the token embeddings by √d_model and adds the sinusoidal table, whose entries are ±1. Added as it
is to token embeddings drawn with std 0.02 (~0.23 per token), the table (a norm of √(d_model/2) = 8 per
position) would drown them. Here the sum is the paper's divided by √d_model: the table enters × 1/√d_model
and the token embeddings as they are, the same ratio of token to position as the paper's, with the residual
stream and the token embeddings' learning rate those of the other models. The learned table is drawn like
every other weight (std 0.02), on the token embeddings' scale too.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from mha.schema import GPTConfig

# The attention kernel each device type trains with, from measurements, not assumptions: the explicit
# steps on CPU (faster there than sdpa: `train_throughput.py --sdpa`, figures in benchmarks/README.md),
# the fused SDPA kernels on CUDA (`train_throughput.py --device cuda`).
KERNELS = ("explicit", "sdpa")
KERNEL_FOR_DEVICE = {"cpu": "explicit", "cuda": "sdpa"}

EMBEDDING_STD = 0.02  # every Linear and Embedding weight is drawn from N(0, 0.02²), as in GPT-2
LEARNED_POSITION_STD = EMBEDDING_STD


def sinusoidal_positions(block_size: int, d_model: int) -> torch.Tensor:
    """The course's fixed encoding, (block_size, d_model): PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),
    PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)). Computed in float64, returned in the default dtype."""
    pos = torch.arange(block_size, dtype=torch.float64)[:, None]  # (T_max, 1)
    two_i = torch.arange(d_model, dtype=torch.float64) // 2 * 2  # (C,): 0, 0, 2, 2, 4, 4, …
    angle = pos / 10000.0 ** (two_i / d_model)  # (T_max, C)
    even = torch.arange(d_model) % 2 == 0  # (C,): sin on even columns, cos on odd ones
    return torch.where(even, angle.sin(), angle.cos()).to(torch.get_default_dtype())  # (T_max, C)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.n_head = config.n_head
        # 1) the per-head W_Q, W_K, W_V of the course, all heads side by side, as one matmul
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=False)
        # 7) W_O
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=False)
        self.dropout = config.dropout
        self.scale_scores = config.scale_scores
        self.resid_dropout = nn.Dropout(config.dropout)
        # 3) the causal mask M: 0 on and below the diagonal, −inf above (query i never sees key j > i)
        mask = torch.full((config.block_size, config.block_size), float("-inf")).triu(1)  # (T_max, T_max)
        self.register_buffer("mask", mask, persistent=False)
        self.kernel = "explicit"  # or "sdpa"; GPT.use_kernel sets it for every block

    def _heads(self, x: torch.Tensor) -> tuple[tuple[torch.Tensor, ...], ...]:
        """1) Q_i, K_i, V_i of every head i, as views of one projection: 3 × H × (B, T, d_k)."""
        B, T, C = x.shape
        # head i owns columns i·d_k … (i+1)·d_k of each third, as in the course's concatenation;
        # the views keep the projection's row stride 3·C, which bmm reads without a copy
        pieces = self.c_attn(x).split(C // self.n_head, dim=2)  # 3·H × (B, T, d_k)
        H = self.n_head
        return pieces[:H], pieces[H : 2 * H], pieces[2 * H :]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        qs, ks, vs = self._heads(x)  # 1) 3 × H × (B, T, d_k)
        if self.kernel == "sdpa":
            q, k, v = (torch.stack(t, dim=1) for t in (qs, ks, vs))  # 3 × (B, H, T, d_k)
            # 2)-5) fused: the same scaled, masked softmax times V, without materialising A
            dropout = self.dropout if self.training else 0.0
            scale = None if self.scale_scores else 1.0  # None: SDPA's own 1/√d_k
            y = F.scaled_dot_product_attention(
                q, k, v, dropout_p=dropout, is_causal=True, scale=scale
            )  # (B, H, T, d_k)
            y = y.transpose(1, 2).reshape(B, T, C)  # 6) concat heads: (B, T, C)
        else:
            # One head at a time: with views instead of a (B·H, T, d_k) copy of Q, K and V, a CPU step
            # is ~4% faster, and every number is bit for bit the same (benchmarks/train_throughput.py).
            heads = []
            for q, k, v in zip(qs, ks, vs, strict=True):
                A = F.dropout(self._softmax(q, k), self.dropout, self.training)  # 2)-4) (B, T, T)
                heads.append(torch.bmm(A, v))  # 5) (B, T, d_k)
            y = torch.cat(heads, dim=2)  # 6) concat heads: (B, T, C)
        return self.resid_dropout(self.c_proj(y))  # 7) (B, T, C)

    def _softmax(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        B, T, d_k = q.shape
        # 2) + 3) in one kernel: M + (Q Kᵀ) / √d_k, with M the additive causal mask (0 or −inf).
        # On CPU this explicit path trains ~35% faster than scaled_dot_product_attention's
        # flash kernel at these sizes (T=128, d_k=64); benchmarks/train_throughput.py measures it.
        alpha = 1.0 / math.sqrt(d_k) if self.scale_scores else 1.0
        scores = torch.baddbmm(self.mask[:T, :T].expand(B, T, T), q, k.transpose(1, 2), alpha=alpha)  # (B, T, T)
        return scores.softmax(dim=-1)  # 4) each row sums to 1 over keys 0 … i

    def weights(self, x: torch.Tensor) -> torch.Tensor:
        """The softmax matrices A of every head: (B, H, T, T)."""
        qs, ks, _ = self._heads(x)
        return torch.stack([self._softmax(q, k) for q, k in zip(qs, ks, strict=True)], dim=1)  # (B, H, T, T)


class MLP(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))  # (B, T, C)


class Block(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.attention = config.attention
        if config.attention:
            self.ln_1 = nn.LayerNorm(config.n_embd)
            self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.attention:
            x = x + self.attn(self.ln_1(x))  # (B, T, C)
        return x + self.mlp(self.ln_2(x))  # (B, T, C)


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        if config.positions == "learned":
            # no draw here: the table is drawn last (below), so every other weight is the same draw for draw
            # as in a model with the sinusoidal table or none, from the same seed
            self.pos_emb = nn.Embedding(config.block_size, config.n_embd,
                                        _weight=torch.empty(config.block_size, config.n_embd))
        elif config.positions == "sinusoidal":
            # a fixed table, rebuilt from the config: no parameter, so nothing for the optimizer or the checkpoint
            self.register_buffer(
                "pos_table", sinusoidal_positions(config.block_size, config.n_embd), persistent=False
            )  # (T_max, C)
            # the paper's tokens × √d_model + table, divided by √d_model (see the module docstring)
            self.position_scale = 1.0 / math.sqrt(config.n_embd)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size)
        position_table = getattr(self, "pos_emb", None)
        for module in self.modules():
            if module is not position_table:
                self._init_weights(module)
        # GPT-2: scale the projections that feed the residual stream by 1/√(2·n_layer)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
        if position_table is not None:
            nn.init.normal_(position_table.weight, mean=0.0, std=LEARNED_POSITION_STD)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=EMBEDDING_STD)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def use_kernel(self, kernel: str) -> GPT:
        """Train and evaluate with the "explicit" or the "sdpa" attention kernel (see the module docstring)."""
        if kernel not in KERNELS:
            raise ValueError(f"attention kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
        for block in self.blocks:
            if self.config.attention:
                block.attn.kernel = kernel
        return self

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def hidden_matrices(self) -> list[nn.Parameter]:
        """The blocks' weight matrices (W_QKV, W_O, the MLP's two), which Muon trains (mha.training.optimizers): the
        embeddings and the LM head map to and from characters, not between hidden layers, so they stay AdamW's."""
        return [p for block in self.blocks for p in block.parameters() if p.dim() == 2]

    def _embed(self, idx: torch.Tensor) -> torch.Tensor:
        B, T = idx.shape
        if T > self.config.block_size:
            raise ValueError(f"the input has {T} tokens "
                             f"but the model was built for block_size={self.config.block_size}")
        x = self.tok_emb(idx)  # (B, T, C)
        if self.config.positions == "learned":
            x = x + self.pos_emb(torch.arange(T, device=idx.device))  # (B, T, C) + (T, C)
        elif self.config.positions == "sinusoidal":
            x = x + self.pos_table[:T] * self.position_scale  # (B, T, C) + (T, C)
        # positions "none": only the causal mask tells the positions apart
        return self.drop(x)  # (B, T, C)

    def forward(
        self, idx: torch.Tensor, targets: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        x = self._embed(idx)  # (B, T, C)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))  # (B, T, vocab)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))  # mean nats per character
        return logits, loss

    @torch.no_grad()
    def attention_weights(self, idx: torch.Tensor) -> torch.Tensor:
        """The attention matrices of every layer and head for idx (B, T): (n_layer, B, n_head, T, T).

        Row i is the distribution of query i over keys 0 … i (rows sum to 1, zero above the diagonal).
        """
        if not self.config.attention:
            raise ValueError("this model was built with attention=False, so it has no attention weights")
        x = self._embed(idx)  # (B, T, C)
        maps = []
        for block in self.blocks:
            maps.append(block.attn.weights(block.ln_1(x)))  # (B, H, T, T)
            x = block(x)
        return torch.stack(maps)  # (L, B, H, T, T)

    @torch.no_grad()
    def generate(
        self,
        idx: torch.Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Append max_new_tokens sampled tokens to idx (B, T); the context is cropped to block_size."""
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature!r}")
        for _ in range(max_new_tokens):
            context = idx[:, -self.config.block_size :]  # (B, ≤block_size)
            logits, _ = self(context)
            logits = logits[:, -1, :] / temperature  # (B, vocab)
            if top_k is not None:
                kth = torch.topk(logits, min(top_k, logits.size(-1))).values[:, [-1]]  # (B, 1)
                logits = logits.masked_fill(logits < kth, float("-inf"))
            probs = F.softmax(logits, dim=-1)  # (B, vocab)
            nxt = torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)
            idx = torch.cat([idx, nxt], dim=1)  # (B, T+1)
        return idx
