# SPDX-License-Identifier: Apache-2.0
# WAV and PNG files against Python's own readers and writers (wave, zlib): load-wav of every
# PCM width and of floats, plain and WAVE_FORMAT_EXTENSIBLE; save-wav read back by wave;
# save-png decoded by hand (zlib, the PNG chunk layout).
import struct
import wave
import zlib

import numpy as np
import pytest

import tensorlisp


@pytest.fixture(scope="module")
def tl():
    with tensorlisp.Interpreter(device="cpu") as interp:
        yield interp


rng = np.random.default_rng(69)


def pcm_bytes(x, width):
    """x (frames, channels) in [-1, 1) as little-endian PCM of WIDTH bytes (8-bit unsigned)."""
    scale = 2.0 ** (8 * width - 1)
    q = np.clip(np.round(x * scale), -scale, scale - 1).astype(np.int64)
    if width == 1:
        return (q + 128).astype(np.uint8).tobytes(), q / scale
    raw = b"".join(int(v).to_bytes(width, "little", signed=True) for v in q.reshape(-1))
    return raw, q / scale


@pytest.mark.parametrize("width", [1, 2, 3, 4])
@pytest.mark.parametrize("channels", [1, 2])
def test_load_pcm(tl, tmp_path, width, channels):
    x = rng.uniform(-1, 1, (50, channels))
    raw, want = pcm_bytes(x, width)
    path = str(tmp_path / "a.wav")
    with wave.open(path, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(22050)
        w.writeframes(raw)
    samples, rate = tl.call("load-wav", path)
    assert rate == 22050
    np.testing.assert_allclose(np.asarray(samples), want.T, atol=1e-7)


def float_wav(path, x, extensible, bits=32):
    """x (frames, channels) written as IEEE floats, optionally as WAVE_FORMAT_EXTENSIBLE."""
    channels = x.shape[1]
    data = x.astype(np.float32 if bits == 32 else np.float64).tobytes()
    block = channels * bits // 8
    if extensible:
        guid = struct.pack("<HHIHH6s", 3, 0, 0x00100000, 0xAA00, 0x3800, b"\x71\x9b\x00\x00\x00\x00")[:16]
        fmt = struct.pack("<HHIIHHHHI", 0xFFFE, channels, 44100, 44100 * block, block, bits, 22, bits, 0) + guid
    else:
        fmt = struct.pack("<HHIIHH", 3, channels, 44100, 44100 * block, block, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"LIST" + struct.pack("<I", 3) + b"abc\0"
    body += b"data" + struct.pack("<I", len(data)) + data
    with open(path, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", len(body)) + body)


@pytest.mark.parametrize("extensible", [False, True])
@pytest.mark.parametrize("bits", [32, 64])
def test_load_float(tl, tmp_path, extensible, bits):
    x = rng.uniform(-1, 1, (40, 3))
    path = str(tmp_path / "f.wav")
    float_wav(path, x, extensible, bits)
    samples, rate = tl.call("load-wav", path)
    assert rate == 44100
    np.testing.assert_allclose(np.asarray(samples), x.T.astype(np.float32), atol=1e-7)


def test_save_wav(tl, tmp_path):
    path = str(tmp_path / "s.wav")
    x = rng.uniform(-1, 1, (2, 300)).astype(np.float32)
    tl.eval(f'(lambda (x) (save-wav x "{path}" :sample-rate 16000))')(tl.tensor(x))
    with wave.open(path, "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()) == (2, 2, 16000, 300)
        q = np.frombuffer(w.readframes(300), dtype="<i2").reshape(300, 2).T
    np.testing.assert_array_equal(q, np.round(x * 32767).astype(np.int16))


def test_bad_wav(tl, tmp_path):
    path = tmp_path / "bad.wav"
    path.write_bytes(b"RIFF\x04\x00\x00\x00WAVE")
    with pytest.raises(tensorlisp.LispError, match="no format chunk"):
        tl.call("load-wav", str(path))
    path.write_bytes(b"not a wav file at all")
    with pytest.raises(tensorlisp.LispError, match="is not a WAV file"):
        tl.call("load-wav", str(path))


def test_empty_data_chunk(tl, tmp_path):
    # A data chunk of size 0 holds no samples, even with other chunks after it (as wave reads it).
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", 0)
    body += b"LIST" + struct.pack("<I", 8) + b"INFOabcd"
    path = tmp_path / "empty.wav"
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    samples, rate = tl.call("load-wav", str(path))
    assert rate == 8000 and np.asarray(samples).shape == (1, 0)


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, {}
    while at < len(data):
        n = struct.unpack(">I", data[at:at + 4])[0]
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + n]
        assert struct.unpack(">I", data[at + 8 + n:at + 12 + n])[0] == zlib.crc32(kind + body)
        chunks[kind] = chunks.get(kind, b"") + body
        at += 12 + n
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    channels = {0: 1, 2: 3, 6: 4}[color]
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8).reshape(height, 1 + width * channels)
    assert (raw[:, 0] == 0).all()
    return raw[:, 1:].reshape(height, width, channels)


@pytest.mark.parametrize("shape", [(3, 5), (4, 2, 3), (2, 6, 4)])
def test_save_png(tl, tmp_path, shape):
    path = str(tmp_path / "i.png")
    x = rng.uniform(0, 1, shape).astype(np.float32)
    tl.eval(f'(lambda (x) (save-png x "{path}"))')(tl.tensor(x))
    got = read_png(path)
    want = np.round(x * 255).astype(np.uint8).reshape(got.shape)
    np.testing.assert_array_equal(got, want)


def mel_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm, mel_scale):
    """torchaudio.functional.melscale_fbanks, written out in NumPy."""
    def hz_to_mel(f):
        if mel_scale == "htk":
            return 2595.0 * np.log10(1.0 + f / 700.0)
        f = np.asarray(f, dtype=np.float64)
        return np.where(f >= 1000.0, 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0), f / (200.0 / 3))

    def mel_to_hz(m):
        if mel_scale == "htk":
            return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
        return np.where(m >= 15.0, 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0)), m * (200.0 / 3))

    freqs = np.linspace(0, sample_rate // 2, n_freqs)
    f_pts = mel_to_hz(np.linspace(hz_to_mel(f_min), hz_to_mel(f_max), n_mels + 2))
    diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - freqs[:, None]
    down = -slopes[:, :-2] / diff[:-1]
    up = slopes[:, 2:] / diff[1:]
    fb = np.maximum(0.0, np.minimum(down, up))
    if norm == "slaney":
        fb *= 2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels])
    return fb


@pytest.mark.parametrize("norm,scale", [(None, "htk"), ("slaney", "slaney"), (None, "slaney")])
def test_mel_filterbank(tl, norm, scale):
    tl.eval("(require 'audio)")
    lisp_norm = "nil" if norm is None else "'" + norm
    got = tl.eval(f"(audio:mel-filterbank 257 40 16000 :f-min 30.0 :f-max 7600.0 :norm {lisp_norm}"
                  f" :mel-scale '{scale} :dtype 'f64)")
    np.testing.assert_allclose(np.asarray(got), mel_fbanks(257, 30.0, 7600.0, 40, 16000, norm, scale), atol=1e-12)


def test_mel_spectrogram(tl):
    tl.eval("(require 'audio)")
    x = rng.standard_normal(4000)
    got = tl.eval("(lambda (x) (audio:mel-spectrogram x 16000 :n-fft 512 :hop-length 128 :n-mels 64))")(tl.tensor(x))
    import torch  # for the spectrogram's stft, whose conventions stft follows
    window = torch.hann_window(512, dtype=torch.float64)
    spec = torch.stft(torch.tensor(x), 512, hop_length=128, window=window, return_complex=True).abs() ** 2
    want = mel_fbanks(257, 0.0, 8000.0, 64, 16000, None, "htk").T @ spec.numpy()
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9, atol=1e-9)
