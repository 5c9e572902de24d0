"""A second corpus beyond the dev corpus, to check that precision holds on architectures the
dev corpus does not have (channel shuffle, dense concatenation, shifted windows with padding
and roll, SSD, Faster/Mask/Keypoint R-CNN post-processing (loops pasting results), LSTM/GRU/Transformer over a dynamic length,
pixel shuffle, im2col, non-dyadic interpolation), exported by torch.onnx at opsets 11-17 with
random weights. Needs python3-torch, python3-torchvision (Debian).
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
