"""Sentence embeddings for search: sentence-transformers' training losses as Keras losses (`losses`), their gradient
computed in mini-batches (`contrastive_model`), exact top-k search in TensorFlow (`search`) and the
information-retrieval and STS metrics (`metrics`)."""
