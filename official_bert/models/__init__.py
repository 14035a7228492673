"""Task models: the encoder with a head for each kind of task."""

from official_bert.models.bert_classifier import BertClassifier
from official_bert.models.bert_language_model import BertLanguageModel
from official_bert.models.bert_multiple_choice import BertMultipleChoice
from official_bert.models.bert_pretrainer import BertPretrainer
from official_bert.models.bert_span_labeler import BertSpanLabeler
from official_bert.models.bert_token_classifier import BertTokenClassifier
from official_bert.models.electra_discriminator import ElectraDiscriminator
