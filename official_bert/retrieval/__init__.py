"""Sentence embeddings for search: sentence-transformers' training losses as Keras losses (`losses`), their gradient
computed in mini-batches (`contrastive_model`), exact top-k search in TensorFlow (`search`), the information-retrieval
and STS metrics (`metrics`) and evaluations (`evaluation`), hard negatives mined with a model (`mining`), and the files
they read: training pairs, triplets and scored pairs (`training_files`) and retrieval sets in BEIR's layout (`beir`)."""
