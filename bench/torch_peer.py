"""The PyTorch + transformers peer of `bench.inference`, in a process of its own: loading PyTorch and TensorFlow in
one process crashed it (exit 139 on an AVX512_BF16 machine: two oneDNN/OpenMP runtimes), and the two runtimes'
thread pools would compete anyway. Prints one JSON line: {"seq_per_s": ...}.

    python -m bench.torch_peer --config '{"vocab_size": 30522, ...}' --batch 32 --seq_length 128 --precision bf16

transformers' BertModel (random weights of the config's shape, gelu_new as our encoder's tanh GELU) under
torch.inference_mode, bf16 with torch.autocast; full-length sequences.
"""

import argparse
import json
import os

import numpy as np

from bench.timing import seconds_per_call


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="the BertConfig's fields as JSON")
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--seq_length", type=int, required=True)
    parser.add_argument("--precision", choices=("fp32", "bf16"), required=True)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()

    import torch
    import transformers

    torch.set_num_threads(os.cpu_count())
    config = json.loads(args.config)
    model = transformers.BertModel(transformers.BertConfig(
        vocab_size=config["vocab_size"], hidden_size=config["hidden_size"],
        num_hidden_layers=config["num_hidden_layers"], num_attention_heads=config["num_attention_heads"],
        intermediate_size=config["intermediate_size"], hidden_act="gelu_new",
        max_position_embeddings=config["max_position_embeddings"], type_vocab_size=config["type_vocab_size"]),
        add_pooling_layer=True).eval()
    ids = np.random.default_rng(0).integers(5, config["vocab_size"], (args.batch, args.seq_length))
    inputs = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.ones(ids.shape, dtype=torch.long),
              "token_type_ids": torch.zeros(ids.shape, dtype=torch.long)}

    def call():
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            return model(**inputs).last_hidden_state.float().numpy()

    print(json.dumps({"seq_per_s": args.batch / seconds_per_call(call, args.seconds),
                      "torch": torch.__version__, "transformers": transformers.__version__}))


if __name__ == "__main__":
    main()
