"""Tiny copies of each task's files in their exact distributed format (no tests here; the test_glue_* files use them).

Quirks kept: CoLA's train/dev have no header; MRPC's header starts with a byte-order mark; quotes are literal
(unbalanced ones too); SST-2 sentences end with a space; QQP's train file has a question broken over two
lines (two malformed rows); MNLI's dev files have five annotator labels, its train file one.
"""

import os


def write_files(root, files):
    """Writes {relative path: text} under root and returns root as a str."""
    for name, text in files.items():
        path = os.path.join(str(root), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return str(root)


def tsv(*rows):
    return "".join("\t".join(row) + "\n" for row in rows)


MNLI_HEAD = ["index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse",
             "sentence1_parse", "sentence2_parse", "sentence1", "sentence2"]


def mnli_row(index, genre, s1, s2, *labels):
    return [index, "31193", "31193n", genre, f"( {s1} )", f"( {s2} )", f"(ROOT {s1})", f"(ROOT {s2})", s1, s2, *labels]


GLUE = {
    "CoLA": {
        "train.tsv": tsv(["gj04", "1", "", "Our friends won't buy this analysis, let alone the next one we propose."],
                         ["gj04", "0", "*", "They drank the pub."]),
        "dev.tsv": tsv(["gj04", "1", "", "The sailors rode the breeze clear of the rocks."],
                       ["gj04", "0", "*", "The more we study verbs, the crazier they get get."]),
        "test.tsv": tsv(["index", "sentence"], ["0", "Bill whistled past the house."],
                        ["1", "The car honked its way down the road."]),
    },
    "SST-2": {
        "train.tsv": tsv(["sentence", "label"], ["hide new secretions from the parental units ", "0"],
                         ["that loves its characters ", "1"]),
        "dev.tsv": tsv(["sentence", "label"], ["it 's a charming and often affecting journey . ", "1"]),
        "test.tsv": tsv(["index", "sentence"], ["0", "uneasy mishmash of styles and genres ."]),
    },
    "MRPC": {
        "train.tsv": "\ufeff" + tsv(
            ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
            ["1", "702876", "702977", 'Amrozi accused his brother , whom he called " the witness " , of deliberately '
             'distorting his evidence .', 'Referring to him as only " the witness " , Amrozi accused his brother .'],
            ["0", "2108705", "2108831", "Yucaipa owned Dominick 's before selling the chain to Safeway .",
             'Yucaipa bought Dominick\'s " in 1995 .']),
        "dev.tsv": "\ufeff" + tsv(["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                                  ["1", "1355540", "1355592", "He said the foodservice pie business doesn 't fit .",
                                   "The foodservice pie business does not fit ."]),
        "test.tsv": "\ufeff" + tsv(["index", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                                   ["0", "1089874", "1089925", "PCCW 's chief operating officer , Mike Butcher , "
                                    "will report directly to Mr So .", "Current Chief Operating Officer Mike "
                                    "Butcher will report to So ."]),
    },
    "STS-B": {
        "train.tsv": tsv(["index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1",
                          "sentence2", "score"],
                         ["0", "main-captions", "MSRvid", "2012test", "0001", "none", "none",
                          "A plane is taking off.", "An air plane is taking off.", "5.000"],
                         ["1", "main-captions", "MSRvid", "2012test", "0004", "none", "none",
                          "A man is playing a large flute.", "A man is playing a flute.", "3.800"]),
        "dev.tsv": tsv(["index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1",
                        "sentence2", "score"],
                       ["0", "main-captions", "MSRvid", "2012test", "0000", "none", "none",
                        "A man with a hard hat is dancing.", "A man wearing a hard hat is dancing.", "5.000"]),
        "test.tsv": tsv(["index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1",
                         "sentence2"],
                        ["0", "main-captions", "MSRvid", "2012test", "0024", "none", "none", "A girl is styling "
                         "her hair.", "A girl is brushing her hair."]),
    },
    "QQP": {
        "train.tsv": tsv(["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
                         ["133273", "213221", "213222", "How is the life of a math student?",
                          "Which level of prepration is enough for the exam jlpt5?", "0"],
                         # A question with a line break: the row splits into two malformed ones.
                         ["201841", "303345", "303346", "Why do people ask Quora questions?", "Which questions"],
                         ["can be answered easily by Google?", "1"],
                         ["402555", "536040", "536041", 'How do I control my "horny emotions?',
                          "How do you control your horniness?", "1"]),
        "dev.tsv": tsv(["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
                       ["40066", "15738", "15739", "Do you believe there is life after death?",
                        "Is it true that there is life after death?", "1"]),
        "test.tsv": tsv(["id", "question1", "question2"],
                        ["0", "Why am I mentally very lonely?", "Find the remainder when 23^24 is divided by 24?"]),
    },
    "MNLI": {
        "train.tsv": tsv(MNLI_HEAD + ["label1", "gold_label"],
                         mnli_row("0", "government", "Conceptually cream skimming has two basic dimensions .",
                                  "Product and geography are what make cream skimming work .", "neutral",
                                  "neutral"),
                         mnli_row("1", "telephone", "you know during the season", "You lose the things .",
                                  "entailment", "entailment")),
        "dev_matched.tsv": tsv(MNLI_HEAD + ["label1", "label2", "label3", "label4", "label5", "gold_label"],
                               # label1 is one annotator's; the label is gold_label, the last column.
                               mnli_row("0", "slate", "The new rights are nice enough", "Everyone really likes "
                                        "the newest benefits", "entailment", "neutral", "neutral", "neutral",
                                        "entailment", "neutral"),
                               mnli_row("1", "slate", 'This site includes a list of "winners .',
                                        "The Government Executive articles housed on the website are not able "
                                        "to be searched .", "contradiction", "contradiction", "contradiction",
                                        "contradiction", "contradiction", "contradiction")),
        "dev_mismatched.tsv": tsv(MNLI_HEAD + ["label1", "label2", "label3", "label4", "label5", "gold_label"],
                                  mnli_row("0", "letters", "Your contribution helped make it possible .",
                                           "Your contributions were of no help .", "contradiction",
                                           "contradiction", "contradiction", "contradiction", "contradiction",
                                           "contradiction")),
        "test_matched.tsv": tsv(MNLI_HEAD, mnli_row("0", "government", "Hierbas , ans seco .",
                                                    "Hierbas is a name .")),
        "test_mismatched.tsv": tsv(MNLI_HEAD, mnli_row("0", "letters", "What have you decided ?",
                                                       "So what 's your decision ?")),
    },
    "QNLI": {
        "train.tsv": tsv(["index", "question", "sentence", "label"],
                         ["0", "When did the third Digimon series begin?", "Unlike the two seasons before it .",
                          "not_entailment"]),
        "dev.tsv": tsv(["index", "question", "sentence", "label"],
                       ["0", "What came into force after the new constitution was herald?",
                        "As of that day, the new constitution came into force.", "entailment"]),
        "test.tsv": tsv(["index", "question", "sentence"],
                        ["0", "What organization is devoted to Jihad?", "For some decades prior, it was Jihad."]),
    },
    "RTE": {
        "train.tsv": tsv(["index", "sentence1", "sentence2", "label"],
                         ["0", "No Weapons of Mass Destruction Found in Iraq Yet.",
                          "Weapons of Mass Destruction Found in Iraq.", "not_entailment"]),
        "dev.tsv": tsv(["index", "sentence1", "sentence2", "label"],
                       ["0", "Dana Reeve died of lung cancer.", "Christopher Reeve had an accident.",
                        "not_entailment"], ["1", "Yet, we now are discovering it.", "Bacteria is winning.",
                                            "entailment"]),
        "test.tsv": tsv(["index", "sentence1", "sentence2"], ["0", "Mangla was summoned.", "Mangla was summoned."]),
    },
    "WNLI": {
        "train.tsv": tsv(["index", "sentence1", "sentence2", "label"],
                         ["0", "I stuck a pin through a carrot. When I pulled the pin out, it had a hole.",
                          "The carrot had a hole.", "1"]),
        "dev.tsv": tsv(["index", "sentence1", "sentence2", "label"],
                       ["0", "The drain is clogged with hair. It has to be cleaned.", "The hair has to be cleaned.",
                        "0"]),
        "test.tsv": tsv(["index", "sentence1", "sentence2"],
                        ["0", "Maude and Dora had seen the trains rushing across the prairie.",
                         "Horses ran away when Maude and Dora came into sight."]),
    },
    "AX": {
        "AX.tsv": tsv(["index", "sentence1", "sentence2"],
                      ["0", "The cat sat on the mat.", "The cat did not sit on the mat."],
                      ["1", "The cat did not sit on the mat.", "The cat sat on the mat."]),
    },
}

XNLI_HEAD = ["language", "gold_label", "sentence1_binary_parse", "sentence2_binary_parse", "sentence1_parse",
             "sentence2_parse", "sentence1", "sentence2", "promptID", "pairID", "genre", "label1", "label2",
             "label3", "label4", "label5"]


def xnli_row(language, label, s1, s2, pair):
    return [language, label, "", "", "", "", s1, s2, "1", pair, "facetoface", label, label, label, label, label]


XNLI = {
    "multinli/multinli.train.de.tsv": tsv(["premise", "hypo", "label"],
                                          ["Konzeptionell cremig .", "Produkt und Geografie .", "neutral"],
                                          ["Du weißt es .", "Du verlierst nichts .", "contradictory"]),
    "xnli.dev.tsv": tsv(XNLI_HEAD, xnli_row("en", "neutral", "And he said, Mama, I'm home.",
                                            "He didn't say a word.", "1"),
                        xnli_row("de", "contradiction", "Und er sagte: Mama, ich bin daheim.",
                                 "Er sagte kein Wort.", "1"),
                        xnli_row("de", "entailment", "Er rief an.", "Er telefonierte.", "2")),
    "xnli.test.tsv": tsv(XNLI_HEAD, xnli_row("de", "neutral", "Gut so.", "Sehr gut.", "3"),
                         xnli_row("fr", "neutral", "Bien.", "Très bien.", "3")),
}

SWAG_HEADER = ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3"
SWAG = {
    "train.csv": SWAG_HEADER + ",label\n"
                 '0,anetv_jkn6uvmqwh4,3416,"Members of the procession walk down the street holding small horn '
                 'brass instruments. A drum line","Members of the procession walk down the street holding small '
                 'horn brass instruments.",A drum line,gold,"passes by walking down the street playing their '
                 'instruments.",has heard approaching them.,"arrives and they\'re outside dancing and asleep.",'
                 'turns the lead singer watches the performance.,0\n',
    "val.csv": SWAG_HEADER + ",label\n"
               '0,lsmdc3016_CHASING_MAVERICKS-6791,19174,"On stage, someone sings. Someone","On stage, someone '
               'sings.",Someone,gen,"smiles, pleased.","waves, ""hi"".",stares.,sits.,3\n',
    "test.csv": SWAG_HEADER + "\n"
                '0,lsmdc1052_Harry_Potter,10,"Someone opens the door. He","Someone opens the door.",He,gold,'
                "walks in.,sings.,flies.,eats.\n",
}
