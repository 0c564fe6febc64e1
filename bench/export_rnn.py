#!/usr/bin/python3
"""Export recurrent and decoder models (random, seeded weights) to ONNX.

Usage: /usr/bin/python3 bench/export_rnn.py [OUTDIR] [NAME...]

OUTDIR defaults to ~/.cache/aoe/models.  Names (default: all):

  lstm_bi2     torch nn.LSTM, 2 layers, bidirectional, input 128, hidden
               256, batch_first; input "input" 1x64x128; outputs the
               sequence and the last hidden and cell states.
  gru2         torch nn.GRU, 2 layers, input 128, hidden 256,
               batch_first; input "input" 1x64x128; outputs the sequence
               and the last hidden state.
  gpt_decoder  a GPT-style decoder: 4 pre-norm layers of causal
               self-attention (d_model 256, 4 heads; the mask made by
               torch.triu, exported as Trilu; the attention products as
               torch.einsum, exported as Einsum) and a GELU MLP, over
               input embeddings "input" 1x64x256 (float, so that the
               benchmark's inputs are).

Weights come from torch.manual_seed(0) before each model is built, so
repeated runs give the same models.  Shapes are static, opset 17.
Requires Debian's python3-torch.
"""
import math
import os
import sys

import torch

SEQ = 64
D_IN = 128
HIDDEN = 256
D_MODEL = 256
HEADS = 4
LAYERS = 4


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(D_IN, HIDDEN, num_layers=2,
                                 bidirectional=True, batch_first=True)

    def forward(self, x):
        y, (h, c) = self.rnn(x)
        return y, h, c


class Gru(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.GRU(D_IN, HIDDEN, num_layers=2,
                                batch_first=True)

    def forward(self, x):
        y, h = self.rnn(x)
        return y, h


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(D_MODEL)
        self.qkv = torch.nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = torch.nn.Linear(D_MODEL, D_MODEL)
        self.ln2 = torch.nn.LayerNorm(D_MODEL)
        self.fc1 = torch.nn.Linear(D_MODEL, 4 * D_MODEL)
        self.fc2 = torch.nn.Linear(4 * D_MODEL, D_MODEL)
        self.gelu = torch.nn.GELU()

    def forward(self, x):
        b, t, d = x.shape
        hd = d // HEADS
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.reshape(b, t, HEADS, hd).transpose(1, 2)
        k = k.reshape(b, t, HEADS, hd).transpose(1, 2)
        v = v.reshape(b, t, HEADS, hd).transpose(1, 2)
        s = torch.einsum("bhqd,bhkd->bhqk", q, k)
        # The causal mask from the scores' own shape: Trilu in the graph.
        mask = torch.triu(torch.ones_like(s[0, 0]), diagonal=1)
        s = s / math.sqrt(hd) - 1e9 * mask
        a = torch.einsum("bhqk,bhkd->bhqd", torch.softmax(s, dim=-1), v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = torch.nn.Parameter(0.02 * torch.randn(SEQ, D_MODEL))
        self.blocks = torch.nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln = torch.nn.LayerNorm(D_MODEL)

    def forward(self, x):
        x = x + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x)


MODELS = {
    "lstm_bi2": (Lstm, (1, SEQ, D_IN), ["output", "h_n", "c_n"]),
    "gru2": (Gru, (1, SEQ, D_IN), ["output", "h_n"]),
    "gpt_decoder": (Decoder, (1, SEQ, D_MODEL), ["output"]),
}


def export(name, outdir):
    cls, shape, outs = MODELS[name]
    torch.manual_seed(0)
    m = cls().eval()
    x = torch.randn(*shape)
    path = os.path.join(outdir, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(m, (x,), path, input_names=["input"],
                          output_names=outs, opset_version=17,
                          do_constant_folding=True)
    print(path)


def main():
    args = sys.argv[1:]
    outdir = os.path.expanduser("~/.cache/aoe/models")
    if args and args[0] not in MODELS:
        outdir = args.pop(0)
    os.makedirs(outdir, exist_ok=True)
    for name in args or list(MODELS):
        if name not in MODELS:
            sys.exit("export_rnn.py: unknown model '%s' (%s)" %
                     (name, " ".join(MODELS)))
        export(name, outdir)


if __name__ == "__main__":
    main()
