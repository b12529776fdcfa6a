"""The report's message catalog: every piece of prose and every label, in English and Brazilian Portuguese.

Messages are str.format templates; the caller formats numbers first (format_number, format_percent)
so that each language gets its own decimal separator. A key missing from either language is a bug,
and a test fails on it (tests/mha/test_report_messages.py).
"""

from __future__ import annotations

import math
import string

LANGUAGES = ("en", "pt")

CATALOG: dict[str, dict[str, str]] = {
    "en": {
        "html_lang": "en",
        "title": "Masked multi-head attention on tiny Shakespeare: the report",
        "subtitle": (
            "A character-level transformer with {n_layer} layers and {n_head} heads per layer, trained on tiny "
            "Shakespeare with and without attention. Every number on this page was measured in this run."
        ),
        "nav_label": "Contents",
        "sec_answer": "The answer",
        "sec_curves": "Learning curves",
        "sec_worked": "The worked example, step by step",
        "sec_heatmaps": "Attention heat-maps",
        "sec_samples": "Samples",
        "sec_facts": "Run facts",
        "model_attention": "With attention",
        "model_no_attention": "Without attention",
        "baseline_unigram": "Unigram baseline",
        "baseline_bigram": "Bigram baseline (add-k)",
        "gap": "Gap (without − with)",
        "unit_nats": "nats/char",
        "kpi_best_attention": "Best validation loss with attention",
        "kpi_best_no_attention": "Best validation loss without attention",
        "kpi_gap": "Gap, without minus with",
        "kpi_unigram": "Unigram baseline",
        "kpi_bigram": "Bigram baseline",
        "col_best_val": "best validation loss",
        "col_final_val": "final validation loss",
        "col_final_train": "final training loss",
        "answer_table_caption": (
            "Loss in nats per character on the validation split (lower is better). "
            "The baselines are counts, not trained models, so they have no training loss."
        ),
        "baselines_note": (
            "The baselines are counted on the training split ({train_chars} characters) and scored on the "
            "validation split ({val_chars} characters), over the {vocab_size}-character vocabulary, with add-k "
            "smoothing (k = {add_k}) so that an unseen character costs a finite loss."
        ),
        "q3_heading": "What happens without attention",
        "q3_intro": (
            "Without attention, each position sees only its own character, so the best the model can learn is "
            "bigram statistics: the probability of the next character given the current one."
        ),
        "q3_no_attention_numbers": (
            "Its best validation loss is {loss} nats/char: {rel_bigram} the bigram baseline ({bigram}) and "
            "{rel_unigram} the unigram baseline ({unigram})."
        ),
        "q3_no_attention_floor": "It plateaus at the bigram floor, as it must.",
        "q3_no_attention_short": (
            "It has not reached the bigram floor: the run ended before the model had learned even the bigram "
            "statistics."
        ),
        "q3_no_attention_below": (
            "It ends a little below the smoothed count baseline, which is a slightly weaker bigram model than a "
            "learned one; without context it cannot go much further."
        ),
        "q3_late_flat": (
            "Between the middle and the end of training its validation loss changed by {change} nats/char, "
            "against {change_attention} for the attention model: it has flattened out while the attention model "
            "keeps improving by using context."
        ),
        "q3_late_both": (
            "Between the middle and the end of training its validation loss changed by {change} nats/char, "
            "against {change_attention} for the attention model."
        ),
        "q3_attention_numbers": (
            "With attention, the best validation loss is {loss} nats/char: {rel_bigram} the bigram baseline and "
            "{rel_unigram} the unigram baseline."
        ),
        "q3_attention_context": (
            "Attention is what takes the model past the bigram floor: each position reads the characters before it."
        ),
        "q3_attention_short": (
            "The attention model has not got past the bigram floor, so in this run context did not pay off yet; "
            "a longer run would show the difference."
        ),
        "q3_gap_positive": "Removing attention costs {gap} nats/char of validation loss ({percent} more).",
        "q3_gap_none": "In this run attention did not lower the validation loss (gap {gap} nats/char).",
        "rel_below": "{diff} below",
        "rel_above": "{diff} above",
        "rel_level": "level with",
        "curves_alt": (
            "Line chart of training and validation loss in nats per character against training step, for the "
            "models with and without attention, with the unigram ({unigram}) and bigram ({bigram}) baselines as "
            "horizontal lines. Validation loss ends at {final_attention} with attention and at "
            "{final_no_attention} without."
        ),
        "curves_caption": (
            "Solid lines: validation loss; dashed lines: training loss. Dotted horizontal lines: the count "
            "baselines on the validation split."
        ),
        "axis_step": "training step",
        "axis_loss": "loss (nats/char)",
        "legend_train": "{model}, training",
        "legend_val": "{model}, validation",
        "speed_heading": "Speed",
        "speed_caption": "Throughput and wall time of each training run on this machine.",
        "col_iterations": "iterations",
        "col_tokens_seen": "tokens seen",
        "col_tokens_per_second": "tokens/s",
        "col_wall": "wall time (s)",
        "col_parameters": "parameters",
        "worked_intro": (
            "The course's example: the tokens “{tokens}” (n = {n}, d_model = {d_model}), {h} heads with "
            "d_k = {d_k}, and the causal mask. Each matrix is computed by the reference implementation "
            "(mha.reference) and set beside the course's published value, which is rounded to 3 decimals "
            "(tolerance {tolerance})."
        ),
        "worked_verdict_pass": "All {count} published matrices match (largest deviation {deviation}).",
        "worked_verdict_fail": "{failed} of {count} published matrices do not match (largest deviation {deviation}).",
        "inputs_heading": "Inputs",
        "inputs_text": "The token embeddings X (one row per token) and each head's projection matrices.",
        "head_heading": "Head {head}",
        "concat_heading": "Concatenation and output",
        "step_Q": "1) Queries Q = X W_Q",
        "step_K": "1) Keys K = X W_K",
        "step_V": "1) Values V = X W_V",
        "step_S": "2) Scores S = Q Kᵀ / √d_k",
        "step_S_scaled": "2) The course prints S · √d_k, which keeps the scores integers",
        "step_M": "3) Causal mask M (−∞ above the diagonal: a token never sees a later one)",
        "step_SM": "3) Masked scores S + M",
        "step_A": "4) Attention weights A = softmax(S + M), row by row",
        "step_head_output": "5) Head output A V",
        "step_concat": "6) Concatenation C = [head 1 | head 2]",
        "step_output": "7) Output Y = C W_O",
        "label_computed": "computed",
        "label_published": "published",
        "check_pass": "✓ matches the published matrix: largest deviation {deviation}",
        "check_fail": "✗ does not match the published matrix: largest deviation {deviation} (tolerance {tolerance})",
        "agreement_heading": "Agreement with PyTorch",
        "agreement_text": (
            "The same computation through torch.nn.MultiheadAttention and scaled_dot_product_attention "
            "(is_causal=True), in float64, against the reference."
        ),
        "col_implementation": "implementation",
        "col_max_difference": "largest |difference|",
        "col_tolerance": "tolerance",
        "col_result": "result",
        "worked_heatmap_alt": (
            "Heat-maps of the attention weights A of the {h} heads of the worked example, with the tokens "
            "{tokens} on both axes; the cells above the diagonal are empty because the mask hides later tokens."
        ),
        "worked_heatmap_caption": "The attention weights A of each head, tokens on both axes.",
        "heatmaps_intro": (
            "The attention weights of every head of the model with attention, on a fixed {T}-character stretch of "
            "the validation text. Rows are queries (the position doing the reading), columns are keys (the "
            "positions read). Nothing lies above the diagonal: a position never sees the future."
        ),
        "excerpt_label": "The excerpt",
        "heatmap_title": "Layer {layer}, head {head}",
        "heatmap_alt": (
            "Heat-map of the attention weights of layer {layer}, head {head} on the excerpt, with its characters "
            "on both axes; the upper triangle is empty (causal mask). {reading}"
        ),
        "reading_previous": (
            "Mostly reads the previous character: {previous} of its weight, mean look-back {distance} characters."
        ),
        "reading_self": (
            "Mostly reads the current character itself: {own} of its weight, mean look-back {distance} characters."
        ),
        "reading_spread": (
            "Spreads its weight over about {keys} characters, looking back {distance} characters on average "
            "({previous} on the previous one)."
        ),
        "axis_query": "query (reading)",
        "axis_key": "key (read)",
        "colorbar": "attention weight",
        "stats_caption": "The statistics behind each reading, averaged over the query positions of the excerpt.",
        "col_layer": "layer",
        "col_head": "head",
        "col_mean_distance": "mean look-back (characters)",
        "col_previous_share": "weight on previous character",
        "col_self_share": "weight on own character",
        "col_effective_keys": "effective number of keys",
        "col_above_diagonal": "weight above the diagonal",
        "samples_intro": "Both models continue the same prompt with the same seed.",
        "sample_prompt": "Prompt",
        "sample_seed": "seed",
        "sample_chars": "{chars} characters",
        "facts_config_heading": "Configuration",
        "facts_config_caption": "The resolved configuration each training run saved beside its checkpoint.",
        "col_setting": "setting",
        "facts_counts_heading": "Parameter counts",
        "facts_env_heading": "Environment",
        "col_value": "value",
        "env_threads": "torch threads",
        "env_cpu": "CPU",
        "env_commit": "git commit",
        "env_commit_date": "commit date",
        "not_recorded": "not recorded",
        "reproduce_heading": "How to reproduce",
        "reproduce_text": "From a fresh clone, with the corpus mirror path in MHA_DATA_MIRROR:",
        "reproduce_language": (
            "To read this report in Portuguese, set report.language to pt in params.yaml and run make repro "
            "again: only the report stage re-runs."
        ),
        "footer": (
            "Generated by the DVC stage report (pipeline/report.py) from this run's outputs. One self-contained "
            "file: it needs no network and runs no scripts."
        ),
        "yes": "yes",
        "no": "no",
    },
    "pt": {
        "html_lang": "pt-BR",
        "title": "Atenção multi-cabeça mascarada no tiny Shakespeare: o relatório",
        "subtitle": (
            "Um transformer em nível de caractere com {n_layer} camadas e {n_head} cabeças por camada, treinado "
            "no tiny Shakespeare com e sem atenção. Todos os números desta página foram medidos nesta execução."
        ),
        "nav_label": "Sumário",
        "sec_answer": "A resposta",
        "sec_curves": "Curvas de aprendizado",
        "sec_worked": "O exemplo resolvido, passo a passo",
        "sec_heatmaps": "Mapas de calor da atenção",
        "sec_samples": "Amostras",
        "sec_facts": "Dados da execução",
        "model_attention": "Com atenção",
        "model_no_attention": "Sem atenção",
        "baseline_unigram": "Linha de base unigrama",
        "baseline_bigram": "Linha de base bigrama (add-k)",
        "gap": "Diferença (sem − com)",
        "unit_nats": "nats/caractere",
        "kpi_best_attention": "Melhor perda de validação com atenção",
        "kpi_best_no_attention": "Melhor perda de validação sem atenção",
        "kpi_gap": "Diferença, sem menos com",
        "kpi_unigram": "Linha de base unigrama",
        "kpi_bigram": "Linha de base bigrama",
        "col_best_val": "melhor perda de validação",
        "col_final_val": "perda de validação final",
        "col_final_train": "perda de treino final",
        "answer_table_caption": (
            "Perda em nats por caractere no conjunto de validação (quanto menor, melhor). "
            "As linhas de base são contagens, não modelos treinados, por isso não têm perda de treino."
        ),
        "baselines_note": (
            "As linhas de base são contadas no conjunto de treino ({train_chars} caracteres) e avaliadas no de "
            "validação ({val_chars} caracteres), sobre o vocabulário de {vocab_size} caracteres, com suavização "
            "add-k (k = {add_k}) para que um caractere nunca visto tenha perda finita."
        ),
        "q3_heading": "O que acontece sem atenção",
        "q3_intro": (
            "Sem atenção, cada posição enxerga apenas o próprio caractere, então o melhor que o modelo consegue "
            "aprender são estatísticas de bigrama: a probabilidade do próximo caractere dado o atual."
        ),
        "q3_no_attention_numbers": (
            "Sua melhor perda de validação é {loss} nats/caractere: {rel_bigram} da linha de base bigrama "
            "({bigram}) e {rel_unigram} da unigrama ({unigram})."
        ),
        "q3_no_attention_floor": "Ela estaciona no piso do bigrama, como era de se esperar.",
        "q3_no_attention_short": (
            "Ela não chegou ao piso do bigrama: o treino terminou antes de o modelo aprender sequer as "
            "estatísticas de bigrama."
        ),
        "q3_no_attention_below": (
            "Ela termina um pouco abaixo da linha de base por contagem suavizada, que é um modelo de bigrama um "
            "pouco pior que um aprendido; sem contexto, não há como ir muito além."
        ),
        "q3_late_flat": (
            "Entre a metade e o fim do treino, sua perda de validação variou {change} nats/caractere, contra "
            "{change_attention} no modelo com atenção: ela se estabilizou, enquanto o modelo com atenção continua "
            "melhorando ao usar o contexto."
        ),
        "q3_late_both": (
            "Entre a metade e o fim do treino, sua perda de validação variou {change} nats/caractere, contra "
            "{change_attention} no modelo com atenção."
        ),
        "q3_attention_numbers": (
            "Com atenção, a melhor perda de validação é {loss} nats/caractere: {rel_bigram} da linha de base "
            "bigrama e {rel_unigram} da unigrama."
        ),
        "q3_attention_context": (
            "É a atenção que leva o modelo além do piso do bigrama: cada posição lê os caracteres anteriores a ela."
        ),
        "q3_attention_short": (
            "O modelo com atenção ainda não passou do piso do bigrama, então nesta execução o contexto ainda não "
            "compensou; um treino mais longo mostraria a diferença."
        ),
        "q3_gap_positive": "Tirar a atenção custa {gap} nats/caractere de perda de validação ({percent} a mais).",
        "q3_gap_none": "Nesta execução a atenção não reduziu a perda de validação (diferença de {gap} nats/caractere).",
        "rel_below": "{diff} abaixo",
        "rel_above": "{diff} acima",
        "rel_level": "no mesmo nível",
        "curves_alt": (
            "Gráfico de linhas da perda de treino e de validação, em nats por caractere, em função do passo de "
            "treinamento, para os modelos com e sem atenção, com as linhas de base unigrama ({unigram}) e bigrama "
            "({bigram}) como retas horizontais. A perda de validação termina em {final_attention} com atenção e "
            "em {final_no_attention} sem."
        ),
        "curves_caption": (
            "Linhas contínuas: perda de validação; tracejadas: perda de treino. Retas horizontais pontilhadas: "
            "as linhas de base por contagem no conjunto de validação."
        ),
        "axis_step": "passo de treinamento",
        "axis_loss": "perda (nats/caractere)",
        "legend_train": "{model}, treino",
        "legend_val": "{model}, validação",
        "speed_heading": "Velocidade",
        "speed_caption": "Vazão e tempo total de cada treino nesta máquina.",
        "col_iterations": "iterações",
        "col_tokens_seen": "tokens vistos",
        "col_tokens_per_second": "tokens/s",
        "col_wall": "tempo total (s)",
        "col_parameters": "parâmetros",
        "worked_intro": (
            "O exemplo do curso: os tokens “{tokens}” (n = {n}, d_model = {d_model}), {h} cabeças com "
            "d_k = {d_k} e a máscara causal. Cada matriz é calculada pela implementação de referência "
            "(mha.reference) e posta ao lado do valor publicado no curso, arredondado para 3 casas decimais "
            "(tolerância {tolerance})."
        ),
        "worked_verdict_pass": "As {count} matrizes publicadas conferem (maior desvio {deviation}).",
        "worked_verdict_fail": "{failed} das {count} matrizes publicadas não conferem (maior desvio {deviation}).",
        "inputs_heading": "Entradas",
        "inputs_text": "Os embeddings dos tokens X (uma linha por token) e as matrizes de projeção de cada cabeça.",
        "head_heading": "Cabeça {head}",
        "concat_heading": "Concatenação e saída",
        "step_Q": "1) Consultas Q = X W_Q",
        "step_K": "1) Chaves K = X W_K",
        "step_V": "1) Valores V = X W_V",
        "step_S": "2) Pontuações S = Q Kᵀ / √d_k",
        "step_S_scaled": "2) O curso mostra S · √d_k, que mantém as pontuações inteiras",
        "step_M": "3) Máscara causal M (−∞ acima da diagonal: um token nunca vê um posterior)",
        "step_SM": "3) Pontuações mascaradas S + M",
        "step_A": "4) Pesos de atenção A = softmax(S + M), linha a linha",
        "step_head_output": "5) Saída da cabeça A V",
        "step_concat": "6) Concatenação C = [cabeça 1 | cabeça 2]",
        "step_output": "7) Saída Y = C W_O",
        "label_computed": "calculado",
        "label_published": "publicado",
        "check_pass": "✓ confere com a matriz publicada: maior desvio {deviation}",
        "check_fail": "✗ não confere com a matriz publicada: maior desvio {deviation} (tolerância {tolerance})",
        "agreement_heading": "Concordância com o PyTorch",
        "agreement_text": (
            "O mesmo cálculo feito com torch.nn.MultiheadAttention e com scaled_dot_product_attention "
            "(is_causal=True), em float64, comparado com a referência."
        ),
        "col_implementation": "implementação",
        "col_max_difference": "maior |diferença|",
        "col_tolerance": "tolerância",
        "col_result": "resultado",
        "worked_heatmap_alt": (
            "Mapas de calor dos pesos de atenção A das {h} cabeças do exemplo resolvido, com os tokens {tokens} "
            "nos dois eixos; as células acima da diagonal estão vazias porque a máscara esconde os tokens "
            "posteriores."
        ),
        "worked_heatmap_caption": "Os pesos de atenção A de cada cabeça, com os tokens nos dois eixos.",
        "heatmaps_intro": (
            "Os pesos de atenção de cada cabeça do modelo com atenção, num trecho fixo de {T} caracteres do texto "
            "de validação. As linhas são consultas (a posição que lê), as colunas são chaves (as posições lidas). "
            "Nada fica acima da diagonal: uma posição nunca vê o futuro."
        ),
        "excerpt_label": "O trecho",
        "heatmap_title": "Camada {layer}, cabeça {head}",
        "heatmap_alt": (
            "Mapa de calor dos pesos de atenção da camada {layer}, cabeça {head}, no trecho, com os caracteres "
            "nos dois eixos; o triângulo superior está vazio (máscara causal). {reading}"
        ),
        "reading_previous": (
            "Lê sobretudo o caractere anterior: {previous} do seu peso, olhando em média {distance} caracteres "
            "para trás."
        ),
        "reading_self": (
            "Lê sobretudo o próprio caractere: {own} do seu peso, olhando em média {distance} caracteres para trás."
        ),
        "reading_spread": (
            "Espalha o peso por cerca de {keys} caracteres, olhando em média {distance} caracteres para trás "
            "({previous} no anterior)."
        ),
        "axis_query": "consulta (quem lê)",
        "axis_key": "chave (o que é lido)",
        "colorbar": "peso de atenção",
        "stats_caption": "As estatísticas por trás de cada leitura, em média sobre as posições de consulta do trecho.",
        "col_layer": "camada",
        "col_head": "cabeça",
        "col_mean_distance": "distância média para trás (caracteres)",
        "col_previous_share": "peso no caractere anterior",
        "col_self_share": "peso no próprio caractere",
        "col_effective_keys": "número efetivo de chaves",
        "col_above_diagonal": "peso acima da diagonal",
        "samples_intro": "Os dois modelos continuam o mesmo texto inicial com a mesma semente.",
        "sample_prompt": "Texto inicial",
        "sample_seed": "semente",
        "sample_chars": "{chars} caracteres",
        "facts_config_heading": "Configuração",
        "facts_config_caption": "A configuração resolvida que cada treino salvou ao lado do seu checkpoint.",
        "col_setting": "parâmetro",
        "facts_counts_heading": "Número de parâmetros",
        "facts_env_heading": "Ambiente",
        "col_value": "valor",
        "env_threads": "threads do torch",
        "env_cpu": "CPU",
        "env_commit": "commit do git",
        "env_commit_date": "data do commit",
        "not_recorded": "não registrado",
        "reproduce_heading": "Como reproduzir",
        "reproduce_text": "Num clone novo, com o caminho do espelho do corpus em MHA_DATA_MIRROR:",
        "reproduce_language": (
            "Para ler este relatório em inglês, ponha report.language como en no params.yaml e rode make repro "
            "de novo: só a etapa do relatório é refeita."
        ),
        "footer": (
            "Gerado pela etapa report do DVC (pipeline/report.py) a partir das saídas desta execução. Um arquivo "
            "autocontido: não precisa de rede e não executa scripts."
        ),
        "yes": "sim",
        "no": "não",
    },
}


def check_language(language: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"report.language is {language!r}; allowed: {', '.join(LANGUAGES)}")
    return language


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def catalog_problems(catalog: dict[str, dict[str, str]] = CATALOG) -> list[str]:
    """Every key missing from a language, and every message whose placeholders differ between languages."""
    keys = {language: set(catalog.get(language, {})) for language in LANGUAGES}
    everything = set().union(*keys.values())
    problems = [f"message {key!r} is missing from the {language!r} catalog"
                for language in LANGUAGES for key in sorted(everything - keys[language])]
    for key in sorted(set.intersection(*keys.values())):
        found = {language: placeholders(catalog[language][key]) for language in LANGUAGES}
        if len({frozenset(p) for p in found.values()}) > 1:
            problems.append(f"message {key!r} has different placeholders per language: {found}")
    return problems


class Messages:
    """The catalog of one language, with its number formats."""

    def __init__(self, language: str):
        self.language = check_language(language)
        self.catalog = CATALOG[language]

    def __call__(self, key: str, /, **values) -> str:
        try:
            template = self.catalog[key]
        except KeyError:
            raise KeyError(f"message {key!r} is missing from the {self.language!r} catalog") from None
        return template.format(**values) if values or "{" in template else template

    def number(self, value: float, decimals: int = 4, signed: bool = False) -> str:
        """1234.5 -> '1,234.5000' (en) or '1.234,5000' (pt); signed adds '+' and uses a true minus sign."""
        if not math.isfinite(value):
            return str(value)
        text = f"{value:{'+' if signed else ''},.{decimals}f}"
        if self.language == "pt":
            text = text.replace(",", "\0").replace(".", ",").replace("\0", ".")
        return text.replace("-", "−")

    def integer(self, value: float) -> str:
        return self.number(round(value), 0)

    def percent(self, share: float, decimals: int = 0) -> str:
        return self.number(100.0 * share, decimals) + "%"

    def scientific(self, value: float) -> str:
        text = f"{value:.1e}".replace("-", "−")
        return text.replace(".", ",") if self.language == "pt" else text
