"""A second corpus beyond the dev corpus, to check that precision holds on architectures the
dev corpus does not have (channel shuffle, dense concatenation, shifted windows with padding
and roll, SSD, Faster/Mask/Keypoint R-CNN post-processing (loops pasting results), LSTM/GRU/Transformer over a dynamic length,
pixel shuffle, im2col, non-dyadic interpolation, a YOLO-style detect head with meshgrid grids,
a GPT-2-style decoder with past keys, a causal-mask slice and `[:, -S:]`), exported by torch.onnx at opsets 11-17 with
random weights, and a decoder in onnxruntime-genai's builder style (make_builder_decoder.py:
GroupQueryAttention, MatMulNBits, SkipSimplifiedLayerNormalization). Needs python3-torch,
python3-torchvision, python3-onnx (Debian).
  /usr/bin/python3 scripts/make_extra_models.py dev_models/extra
  scripts/precision.py --models-dir dev_models/extra --sizes scripts/precision_sizes_extra.json"""
import os, sys, torch, torchvision
import torch.nn as nn
import torch.nn.functional as F
out = sys.argv[1] if len(sys.argv) > 1 else "dev_models/extra"
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
tv = torchvision.models
def export(name, model, args, names, dyn, opset=17):
    path = os.path.join(out, name + ".onnx")
    if os.path.exists(path): return
    model.eval()
    try:
        torch.onnx.export(model, args, path, input_names=names, dynamic_axes=dyn, opset_version=opset)
        print("ok", name, flush=True)
    except Exception as e:
        print("FAIL", name, type(e).__name__, str(e)[:300], flush=True)
img = torch.randn(1, 3, 224, 224)
dyn = {"x": {0: "N", 2: "H", 3: "W"}}
export("shufflenet", tv.shufflenet_v2_x0_5(), (img,), ["x"], dyn, 13)
export("squeezenet", tv.squeezenet1_0(), (img,), ["x"], dyn, 11)
export("mobilenet_v3_small", tv.mobilenet_v3_small(), (img,), ["x"], dyn, 17)
export("densenet121", tv.densenet121(), (img,), ["x"], dyn, 13)
export("convnext_tiny", tv.convnext_tiny(), (img,), ["x"], dyn, 17)
export("swin_t", tv.swin_t(), (img,), ["x"], dyn, 17)
export("deeplabv3_mbv3", tv.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None, aux_loss=False), (torch.randn(1,3,256,256),), ["x"], dyn, 17)
export("ssdlite", tv.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None), ([torch.rand(3, 320, 320)],), ["images"], {"images": {1: "H", 2: "W"}}, 17)
export("fasterrcnn_op11", tv.detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None), ([torch.rand(3, 320, 320)],), ["images"], {"images": {1: "H", 2: "W"}}, 11)
export("maskrcnn", tv.detection.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None), ([torch.rand(3, 320, 320)],), ["images"], {"images": {1: "H", 2: "W"}}, 17)
export("keypointrcnn", tv.detection.keypointrcnn_resnet50_fpn(weights=None, weights_backbone=None), ([torch.rand(3, 320, 320)],), ["images"], {"images": {1: "H", 2: "W"}}, 17)
export("fasterrcnn_mbv3", tv.detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None), ([torch.rand(3, 320, 320)],), ["images"], {"images": {1: "H", 2: "W"}}, 17)
export("vit_b_16", tv.vit_b_16(), (img,), ["x"], {"x": {0: "N"}}, 17)  # ViT-B/16 at 224x224: 197 tokens of 768
class Seq(nn.Module):
    def __init__(s):
        super().__init__()
        s.emb = nn.Embedding(100, 32)
        s.lstm = nn.LSTM(32, 48, num_layers=2, batch_first=True, bidirectional=True)
        s.gru = nn.GRU(96, 24, batch_first=True)
        enc = nn.TransformerEncoderLayer(24, 4, 64, batch_first=True)
        s.tr = nn.TransformerEncoder(enc, 2)
        s.out = nn.Linear(24, 10)
    def forward(s, ids):
        x = s.emb(ids)
        x, _ = s.lstm(x)
        x, _ = s.gru(x)
        x = s.tr(x)
        x = F.interpolate(x.transpose(1, 2), scale_factor=0.5, mode="linear").transpose(1, 2)
        return s.out(x).log_softmax(-1)
export("seq_lstm_tr", Seq(), (torch.randint(0, 100, (2, 20)),), ["ids"], {"ids": {0: "B", 1: "T"}}, 14)
class Up(nn.Module):
    def __init__(s):
        super().__init__()
        s.c = nn.Conv2d(3, 16, 3, padding=1)
        s.ps = nn.PixelShuffle(2)
    def forward(s, x):
        y = s.ps(s.c(x))
        z = F.interpolate(y, scale_factor=1.5, mode="nearest")
        u = F.unfold(x, 3, stride=2, padding=1)
        w = F.interpolate(y, size=(x.shape[2] // 3, x.shape[3] // 3), mode="bilinear", align_corners=True)
        return y, z, u, w
export("upsample_mix", Up(), (torch.randn(1, 3, 64, 48),), ["x"], dyn, 13)
# YOLOv5-style detect head: per level view(bs, na, no, ny, nx), meshgrid grids, levels concatenated.
class Yolo(nn.Module):
    def __init__(s, nc=5, na=3):
        super().__init__()
        s.no = nc + 5; s.na = na
        s.b1 = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.SiLU(), nn.Conv2d(32, 32, 3, 2, 1), nn.SiLU())
        s.b2 = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1), nn.SiLU())
        s.b3 = nn.Sequential(nn.Conv2d(64, 64, 3, 2, 1), nn.SiLU())
        s.up = nn.Upsample(scale_factor=2, mode="nearest")
        s.m = nn.ModuleList([nn.Conv2d(c, s.no * na, 1) for c in (32 + 64, 64 + 64, 64)])
        s.stride = [8, 16, 32]
    def forward(s, x):
        p3 = s.b1(x); p4 = s.b2(p3); p5 = s.b3(p4)
        f4 = torch.cat([s.up(p5)[..., :p4.shape[2], :p4.shape[3]], p4], 1)
        f3 = torch.cat([s.up(p4)[..., :p3.shape[2], :p3.shape[3]], p3], 1)
        outs = []
        for i, f in enumerate([f3, f4, p5]):
            y = s.m[i](f)
            bs, _, ny, nx = y.shape
            y = y.view(bs, s.na, s.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
            grid = torch.stack((xv, yv), 2).expand(1, s.na, ny, nx, 2).float()
            y = y.sigmoid()
            xy = (y[..., 0:2] * 2 - 0.5 + grid) * s.stride[i]
            y = torch.cat((xy, y[..., 2:]), -1)
            outs.append(y.view(bs, -1, s.no))
        return torch.cat(outs, 1)
export("yolo_head", Yolo(), (torch.randn(1, 3, 256, 320),), ["x"], {"x": {0: "N", 2: "H", 3: "W"}}, 13)
class GPT(nn.Module):
    def __init__(s, v=100, d=64, h=4, n=2):
        super().__init__()
        s.wte = nn.Embedding(v, d); s.wpe = nn.Embedding(512, d); s.h = h; s.d = d
        s.qkv = nn.ModuleList([nn.Linear(d, 3 * d) for _ in range(n)]); s.o = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])
        s.register_buffer("bias", torch.tril(torch.ones(512, 512)).view(1, 1, 512, 512))
    def forward(s, ids, mask, past_k, past_v):
        B, S = ids.shape
        P = past_k.shape[3]
        pos = torch.arange(P, P + S).unsqueeze(0)
        x = s.wte(ids) + s.wpe(pos)
        am = mask[:, None, None, :].float()
        am = (1.0 - am) * -10000.0
        presents = []
        for i in range(len(s.qkv)):
            q, k, v = s.qkv[i](x).split(s.d, dim=2)
            sh = lambda t: t.view(B, S, s.h, s.d // s.h).transpose(1, 2)
            q, k, v = sh(q), sh(k), sh(v)
            k = torch.cat([past_k[i], k], dim=2); v = torch.cat([past_v[i], v], dim=2)
            presents.append(k)
            w = q @ k.transpose(-1, -2) / (s.d // s.h) ** 0.5
            L = k.size(-2)
            causal = s.bias[:, :, L - S:L, :L].bool()
            w = torch.where(causal, w, torch.tensor(-1e4)) + am
            a = (w.softmax(-1) @ v).transpose(1, 2).contiguous().view(B, S, s.d)
            x = x + s.o[i](a)
        pid = (mask.cumsum(-1) - 1)[:, -S:]
        return x, torch.stack(presents), pid
ids = torch.randint(0, 100, (2, 5)); pk = torch.randn(2, 2, 4, 3, 16)
export("gpt_past", GPT(), (ids, torch.ones(2, 8, dtype=torch.long), pk, pk), ["ids", "mask", "past_k", "past_v"],
       {"ids": {0: "B", 1: "S"}, "mask": {0: "B", 1: "L"}, "past_k": {1: "B", 3: "P"}, "past_v": {1: "B", 3: "P"}}, 14)
# A decoder as onnxruntime-genai's model builder writes it (contrib ops, 4-bit weights): not a
# torch export, written with onnx's helpers.
if not os.path.exists(os.path.join(out, "builder_decoder.onnx")):
    import subprocess
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_builder_decoder.py"),
                    os.path.join(out, "builder_decoder.onnx")], check=True)
    print("ok builder_decoder", flush=True)
