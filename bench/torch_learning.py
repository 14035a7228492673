"""The transformers peer of `bench.learning`, in a process of its own (PyTorch and TensorFlow in one process crash):
`BertForSequenceClassification` from the MiniLM directory fine-tuned on <work>/train.csv with the bench's settings
(torch AdamW, weight decay 0.01 except on biases and LayerNorm, gradients clipped at norm 1, 10 % linear warm-up then linear decay, dropout 0.1,
shuffled batches), evaluated on <work>/dev.csv. Prints one JSON line: {"accuracy": ...}.

    python -m bench.torch_learning --work DIR --model MINILM_DIR --seed 1 [--epochs 3]
"""

import argparse
import csv
import json
import os


def read_csv(path):
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [r["text"] for r in rows], [r["label"] for r in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--seq_length", type=int, default=128)
    args = parser.parse_args()

    import torch
    import transformers

    torch.set_num_threads(os.cpu_count())
    transformers.set_seed(args.seed)
    texts, labels = read_csv(os.path.join(args.work, "train.csv"))
    dev_texts, dev_labels = read_csv(os.path.join(args.work, "dev.csv"))
    names = sorted(set(labels))
    tokenizer = transformers.BertTokenizerFast.from_pretrained(args.model)
    model = transformers.BertForSequenceClassification.from_pretrained(args.model, num_labels=len(names))
    no_decay = ("bias", "LayerNorm.weight")
    groups = [{"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)], "weight_decay": 0.01},
              {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=args.learning_rate)
    steps = args.epochs * -(-len(texts) // args.batch_size)
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, int(0.1 * steps), steps)
    targets = torch.tensor([names.index(label) for label in labels])
    generator = torch.Generator().manual_seed(args.seed)
    model.train()
    for _ in range(args.epochs):
        order = torch.randperm(len(texts), generator=generator)
        for begin in range(0, len(texts), args.batch_size):
            batch = order[begin:begin + args.batch_size]
            inputs = tokenizer([texts[i] for i in batch], padding=True, truncation=True, max_length=args.seq_length,
                               return_tensors="pt")
            loss = model(**inputs, labels=targets[batch]).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
    model.eval()
    correct = 0
    with torch.inference_mode():
        for begin in range(0, len(dev_texts), 64):
            inputs = tokenizer(dev_texts[begin:begin + 64], padding=True, truncation=True, max_length=args.seq_length,
                               return_tensors="pt")
            predicted = model(**inputs).logits.argmax(-1).tolist()
            correct += sum(names[p] == y for p, y in zip(predicted, dev_labels[begin:begin + 64]))
    print(json.dumps({"accuracy": correct / len(dev_texts)}))


if __name__ == "__main__":
    main()
