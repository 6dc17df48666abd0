import string

from hypothesis import given, settings, strategies as st

from tagger.text import (NORMALIZER_VERSION, RUN_RE, _TOKEN_RE, Analyzer, decode_latex, document_text, fold, is_token,
                         normalize, run_bytes, strip_markup, token_text)


def test_latex_accents_commands_and_math():
    assert decode_latex(r"Schr{\"o}dinger and Erd\H{o}s, \v{C}ech, na\"ive") == "Schrödinger and Erdős, Čech, naïve"
    assert decode_latex(r"\'etude \`a la Fran\c{c}aise") == "étude à la Française"
    assert decode_latex(r"\emph{deep} \textbf{\emph{nets}}") == "deep nets"
    assert normalize(r"a cost of $\mathcal{O}(n^2)$ with $\alpha$") == "a cost of O(n^2) with alpha"
    assert normalize(r"R\&D at 50\% of \$3") == "R&D at 50% of $3"
    assert normalize("pages 1--3~and {B}ayes") == "pages 1\u20133 and Bayes"



def test_latex_as_bibtex_writes_it():
    # what the .bib reader hands to the model goes through this one decoder
    assert decode_latex(r"Garc{\'\i}a, na\"{\i}ve, \'\i") == "García, naïve, í"
    assert normalize(r"{\em Deep} {\bf nets} and \emph{{BERT} models}") == "Deep nets and BERT models"
    assert normalize(r"as in \cite[p.~3]{key}, \citep{a,b} and Fig.~\ref{fig:1}") == "as in , and Fig."
    assert normalize(r"\href{http://x.org/a}{our code} at \url{http://y.org}") == "our code at http://y.org"
    assert normalize(r"hy\-phen\-ation, a\,b and c\;d") == "hyphenation, a b and c d"
    assert normalize(r"$\left(x\right)$ and \textsuperscript{th}") == "(x ) and th"

def test_hard_line_breaks_and_hyphens():
    assert normalize("a self-\nsupervised\nmodel\r\nhere") == "a self-supervised model here"
    assert normalize("inter\u00adnational  \t spaces") == "international spaces"


def test_unicode_is_nfkc_and_folded_for_matching():
    assert normalize("\ufb01ne-tuning") == "fine-tuning"  # the fi ligature
    assert fold("Schrödinger GÖDEL") == "schrodinger godel"


def test_analyzer_unigrams_and_bigrams_without_stop_words():
    an = Analyzer(stop_words={"the", "of"}, ngram_max=2)
    assert an("The GPT-4 model of 3D scenes, 2024") == ["gpt", "model", "3d", "scenes", "gpt model", "model 3d", "3d scenes"]
    assert [s for _, s in Analyzer(stem=str.upper).tokens("Deep nets")] == ["DEEP", "NETS"]


def test_document_text_puts_the_title_first():
    assert document_text({"title": "T", "abstract": "A b."}) == "T. A b."
    assert document_text({"abstract": "A b."}) == "A b."


text_like = st.text(alphabet=string.ascii_letters + string.digits + " \n\t-$\\{}\"'.,~^_\u00e9\u00fc\u00ad", max_size=200)


@given(text_like)
@settings(max_examples=300)
def test_normalize_gives_one_clean_line(s):
    out = normalize(s)
    assert "\n" not in out and "\t" not in out and "  " not in out
    assert out == out.strip()
    assert "\u00ad" not in out


@given(st.text(max_size=200))
@settings(max_examples=300)
def test_normalize_never_fails_and_is_stable(s):
    once = normalize(s)
    assert normalize(once) == normalize(normalize(once))


@given(st.lists(st.from_regex(r"[a-z]{2,8}", fullmatch=True), min_size=1, max_size=20))
def test_analyzer_counts_every_plain_word(words):
    an = Analyzer(ngram_max=2)
    terms = an(" ".join(words))
    assert terms[:len(words)] == words
    assert len(terms) == 2 * len(words) - 1


wide_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120)


@settings(max_examples=400)
@given(st.one_of(text_like, wide_text, st.lists(st.sampled_from(["self-\n", "-\r\n  ", "\u00ad", "\ufb01", "Ö", "é",
                                                                  "\u0301", "\u00a0", "x", "2", " ", "\\emph{a}", "$",
                                                                  "<jats:p>", "</sub>", "<EOS>", "&amp;", "&lt;",
                                                                  "<", ">", "\u200b", "\u2060", "\ufeff"]),
                                                 max_size=30).map("".join)))
def test_token_text_gives_the_tokens_of_fold_normalize(s):
    """The fast tokeniser path (no hyphen joining, no whitespace collapsing, bytes) yields
    exactly the tokens the shipped model was trained on."""
    want = _TOKEN_RE.findall(fold(normalize(s)))
    runs = RUN_RE.findall(token_text(s))
    assert [r for r in runs if is_token(r)] == want
    assert [r.decode("ascii") for r in run_bytes(token_text(s))] == runs


def test_run_bytes_on_ascii_and_other_text():
    assert run_bytes("gpt-4 and 3d, x2") == [b"gpt", b"4", b"and", b"3d", b"x2"]
    assert run_bytes("α-helix 3d") == [b"helix", b"3d"]


@settings(max_examples=300)
@given(st.one_of(text_like, wide_text))
def test_fold_drops_exactly_the_combining_marks(s):
    import unicodedata

    want = "".join(c for c in unicodedata.normalize("NFKD", s.lower()) if not unicodedata.combining(c))
    assert fold(s) == (s.lower() if s.isascii() else want)


def test_markup_of_jats_mathml_and_html_is_removed():
    jats = ("<jats:title>Abstract</jats:title>\n <jats:p>We model <jats:italic>H</jats:italic><jats:sub>2</jats:sub>O "
            "flows.</jats:p><jats:list><jats:list-item><jats:p>Fast &amp; exact.</jats:p></jats:list-item></jats:list>")
    assert normalize(jats) == "We model H2O flows. Fast & exact."
    assert normalize("<h2>ABSTRACT:</h2><p>Deep <b>nets</b>.</p><p>More<br/>text</p>") == "Deep nets. More text"
    mathml = '<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:mi>x</mml:mi><mml:mo>=</mml:mo></mml:math>'
    assert normalize(f"where {mathml} holds") == "where x= holds"
    assert normalize('see <a href="https://x.org">the code</a>') == "see the code"


def test_text_that_only_looks_like_markup_stays():
    for t in ("p < 0.05 and q > 0.1", "if a<b and c>d then", "the <EOS> and <unk> tokens", "0<p<1", "AT&T and R&D"):
        assert normalize(t) == t
    assert strip_markup("&lt;p&gt; is a tag") == "<p> is a tag"  # decoded after the tags are gone
    assert strip_markup("caf&eacute; &#233; &#x00e9;") == "café é é"


def test_format_characters_are_removed():
    assert normalize("convo\u00adlutional ima\u200bges, \u2060joined\u200d, \ufeffbom \u200fmark") == (
        "convolutional images, joined, bom mark")
    assert token_text("ima\u200bges") == "images"


def test_the_format_class_is_unicode_category_cf():
    import sys
    import unicodedata

    from tagger.text import _FORMAT_RE

    want = {c for c in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(c) == "Cf"}
    got = {c for c in map(chr, range(sys.maxunicode + 1)) if _FORMAT_RE.fullmatch(c)}
    assert got == want, (sorted(map(hex, map(ord, want - got))), sorted(map(hex, map(ord, got - want))))


def test_normalizer_version_is_recorded_by_training(small_model_dir):
    import json

    assert NORMALIZER_VERSION == 2
    assert json.loads((small_model_dir / "manifest.json").read_text())["feature_version"]["normaliser"] == NORMALIZER_VERSION
