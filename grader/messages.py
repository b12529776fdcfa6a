"""Every message a student or instructor reads, in English and Brazilian Portuguese, from one catalog.

Judging never writes prose: it returns ``Message(key, values)`` records, and ``render(lang, message)``
words them once, at the end (a value that is itself a Message is rendered first).
``text(lang, key, **params)`` renders one key. A key missing from either language is a bug that
``tests/grader/test_messages.py`` catches.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

LANGS = ("en", "pt")

CATALOG: dict[str, dict[str, str]] = {
    # ---- test names: each starts with the function's name
    "test.worked": {"en": "{function}: worked example", "pt": "{function}: exemplo resolvido"},
    "test.hidden": {"en": "{function}: hidden cases", "pt": "{function}: casos ocultos"},
    "test.large": {"en": "{function}: large scores", "pt": "{function}: escores grandes"},
    # ---- which case a message is about (sizes only, never values)
    "case.worked": {"en": "Worked example", "pt": "Exemplo resolvido"},
    "case.worked_head": {"en": "Worked example, head {head}", "pt": "Exemplo resolvido, cabeça {head}"},
    "case.worked_project": {"en": "Worked example, X · {w}", "pt": "Exemplo resolvido, X · {w}"},
    "case.sizes": {"en": "Hidden case with {params}", "pt": "Caso oculto com {params}"},
    "case.sizes_masked": {
        "en": "Hidden case with {params}, causal mask already added (−inf entries)",
        "pt": "Caso oculto com {params}, já com a máscara causal somada (entradas −inf)",
    },
    "case.large": {
        "en": "Case with scores of about ±1000, {params}",
        "pt": "Caso com escores da ordem de ±1000, {params}",
    },
    # ---- passing
    "pass.worked": {"en": "Matches the worked example.", "pt": "Confere com o exemplo resolvido."},
    "pass.cases": {"en": "All {count} cases pass.", "pt": "Todos os {count} casos passaram."},
    "fail.count": {"en": "({failed} of {count} cases fail.)", "pt": "({failed} de {count} casos falharam.)"},
    # ---- what was wrong in one case
    "detail.shape": {
        "en": "expected shape {expected}, got {got}.",
        "pt": "o formato esperado é {expected}, mas veio {got}.",
    },
    "detail.shape_transposed": {
        "en": "expected shape {expected}, got {got}: it looks transposed.",
        "pt": "o formato esperado é {expected}, mas veio {got}: parece que está transposto.",
    },
    "detail.not_finite": {
        "en": "entry {entry} is {value}; every entry should be a finite number.",
        "pt": "a entrada {entry} é {value}; todas as entradas deveriam ser números finitos.",
    },
    "detail.row_sum": {
        "en": "row {row} sums to {total}; each row of a softmax sums to 1.",
        "pt": "a linha {row} soma {total}; cada linha de uma softmax soma 1.",
    },
    "detail.should_mask_mask": {
        "en": "entry {entry} should be masked: it is a future position, so the mask holds −inf there (got {got}).",
        "pt": "a entrada {entry} deveria estar mascarada: é uma posição "
              "futura, então a máscara vale −inf ali (veio {got}).",
    },
    "detail.should_not_mask_mask": {
        "en": "entry {entry} should not be masked: on and below the diagonal the mask holds 0 (got {got}).",
        "pt": "a entrada {entry} não deveria estar mascarada: na diagonal e abaixo dela a máscara vale 0 (veio {got}).",
    },
    "detail.should_mask_weight": {
        "en": "entry {entry} should be masked: token {row} cannot attend to the "
              "future token {col}, so its weight must be 0 (got {got}).",
        "pt": "a entrada {entry} deveria estar mascarada: o token {row} não pode prestar "
              "atenção ao token futuro {col}, então o peso deve ser 0 (veio {got}).",
    },
    "detail.should_not_mask_weight": {
        "en": "entry {entry} should not be masked: token {row} may attend to token "
              "{col} (itself or an earlier token), but its weight is 0.",
        "pt": "a entrada {entry} não deveria estar mascarada: o token {row} pode prestar "
              "atenção ao token {col} (ele mesmo ou um anterior), mas o peso veio 0.",
    },
    "detail.entries": {
        "en": "{wrong} of {total} entries are wrong; the first is entry {entry} (you returned {got}).",
        "pt": "{wrong} de {total} entradas estão erradas; a primeira é a entrada {entry} (você retornou {got}).",
    },
    "detail.entries_worked": {
        "en": "{wrong} of {total} entries are wrong; entry {entry} is {got}, but the worked example gives {want}.",
        "pt": "{wrong} de {total} entradas estão erradas; a entrada {entry} "
              "vale {got}, mas o exemplo resolvido dá {want}.",
    },
    "detail.values": {"en": "the values are wrong.", "pt": "os valores estão errados."},
    "detail.internal": {
        "en": "the grader could not judge this answer ({error}); please tell your instructor.",
        "pt": "o corretor não conseguiu avaliar esta resposta ({error}); avise o seu professor.",
    },
    "note.low_precision": {
        "en": "Your result was {dtype}, and that precision is what is off here: compute in float32 or float64.",
        "pt": "Seu resultado veio em {dtype}, e é essa precisão que causa a "
              "diferença aqui: calcule em float32 ou float64.",
    },
    "note.float32": {
        "en": "Note: your results are {dtype}; that is accepted (the tolerance "
              "covers float32 rounding), float64 is the course's default.",
        "pt": "Observação: seus resultados vêm em {dtype}; isso é aceito (a tolerância "
              "cobre o arredondamento de float32), o padrão do curso é float64.",
    },
    "note.finite_mask": {
        "en": "Note: your mask uses {value} for masked entries; any value at or "
              "below -1e9 counts as masked, but the course writes −inf.",
        "pt": "Observação: sua máscara usa {value} nas entradas mascaradas; qualquer valor "
              "menor ou igual a -1e9 conta como mascarado, mas o curso escreve −inf.",
    },
    "note.not_causal": {
        "en": "With causal=False nothing is masked: every token attends to every token, later ones included.",
        "pt": "Com causal=False nada é mascarado: cada token presta atenção "
              "a todos os tokens, inclusive aos posteriores.",
    },
    "detail.mask_needs_inf": {
        "en": "entry {entry} holds {got}; this course requires exactly −inf for "
              "masked entries (float('-inf'), np.inf with a minus sign).",
        "pt": "a entrada {entry} vale {got}; este curso exige exatamente −inf "
              "nas entradas mascaradas (float('-inf'), -np.inf).",
    },
    "detail.should_not_mask_unmasked": {
        "en": "entry {entry} should not be masked: with causal=False token {row} may attend "
              "to every token, including token {col}, but its weight is 0.",
        "pt": "a entrada {entry} não deveria estar mascarada: com causal=False o token {row} pode "
              "prestar atenção a todos os tokens, inclusive ao token {col}, mas o peso veio 0.",
    },
    "detail.returned_container": {
        "en": "you returned a {kind} holding {count} items, not one matrix: return only the "
              "{expected} matrix (for example the output, without the attention weights).",
        "pt": "você retornou um(a) {kind} com {count} itens, e não uma matriz: retorne só a "
              "matriz {expected} (por exemplo a saída, sem os pesos de atenção).",
    },
    "detail.returned_mixed": {
        "en": "you returned a {kind} of items with different shapes, not one matrix: return only the "
              "{expected} matrix (for example the output, without the attention weights).",
        "pt": "você retornou um(a) {kind} de itens com formatos diferentes, e não uma matriz: retorne "
              "só a matriz {expected} (por exemplo a saída, sem os pesos de atenção).",
    },
    "detail.returned_none": {
        "en": "your function returned None: is a return statement missing?",
        "pt": "sua função retornou None: falta um return?",
    },
    "detail.returned_scalar": {
        "en": "you returned a single number ({kind}), not a matrix of shape {expected}.",
        "pt": "você retornou um único número ({kind}), e não uma matriz de formato {expected}.",
    },
    "detail.raised": {"en": "your function raised {error}{where}.", "pt": "sua função lançou {error}{where}."},
    "detail.where": {"en": " (line {line} of your file)", "pt": " (linha {line} do seu arquivo)"},
    "detail.not_implemented": {
        "en": "not implemented yet (it raises NotImplementedError).",
        "pt": "ainda não foi implementada (lança NotImplementedError).",
    },
    "detail.memory": {
        "en": "ran out of memory (the limit is {limit} GiB){where}.",
        "pt": "ficou sem memória (o limite é {limit} GiB){where}.",
    },
    "detail.convert": {
        "en": "returned something that is not a matrix of numbers ({error}).",
        "pt": "retornou algo que não é uma matriz de números ({error}).",
    },
    "detail.timeout": {
        "en": "did not finish within {seconds} s (an infinite loop?); this function's remaining cases were skipped.",
        "pt": "não terminou em {seconds} s (um laço infinito?); os demais casos desta função foram pulados.",
    },
    "detail.crash": {
        "en": "the Python process running your code stopped during this call "
              "({code}); this function's remaining cases were skipped.",
        "pt": "o processo Python que executava seu código parou durante esta chamada "
              "({code}); os demais casos desta função foram pulados.",
    },
    "detail.too_big": {
        "en": "returned {entries} numbers, more than the {limit} allowed.",
        "pt": "retornou {entries} números, mais do que os {limit} permitidos.",
    },
    "detail.protocol": {
        "en": "your code wrote to the grader's private channel; this call counts as failed.",
        "pt": "seu código escreveu no canal privado do corretor; esta chamada conta como falha.",
    },
    "detail.not_loaded": {
        "en": "not run: your file could not be loaded again after an earlier timeout or crash.",
        "pt": "não executado: seu arquivo não pôde ser carregado de novo "
              "depois de um tempo esgotado ou de uma falha anterior.",
    },
    "detail.skipped": {
        "en": "skipped: this function already timed out or crashed in an earlier test.",
        "pt": "pulado: esta função já esgotou o tempo ou travou em um teste anterior.",
    },
    "detail.load_failed": {
        "en": "not run: your file could not be imported (see the message above the tests).",
        "pt": "não executado: seu arquivo não pôde ser importado (veja a mensagem acima dos testes).",
    },
    "detail.missing": {"en": "your file does not define {function}.", "pt": "seu arquivo não define {function}."},
    "code.exit": {"en": "exit code {code}", "pt": "código de saída {code}"},
    "code.signal": {"en": "killed by signal {name}", "pt": "encerrado pelo sinal {name}"},
    "code.cpu": {
        "en": "it used up its CPU-time limit of {seconds} s",
        "pt": "ele esgotou o limite de tempo de CPU de {seconds} s",
    },
    # ---- loading the file
    "load.error": {
        "en": "Your file could not be imported: {error}{where}. No test could run.{hint}",
        "pt": "Não foi possível importar seu arquivo: {error}{where}. Nenhum teste pôde ser executado.{hint}",
    },
    "load.grader_import": {
        "en": " Submissions cannot import the grader's packages (mha, grader): write the functions yourself.",
        "pt": " Submissões não podem importar os pacotes do corretor (mha, grader): escreva as funções você mesmo.",
    },
    "load.timeout": {
        "en": "Importing your file took longer than {seconds} s; does it run "
              "something slow at the top level? No test could run.",
        "pt": "Importar seu arquivo levou mais de {seconds} s; ele executa algo "
              "demorado no nível do módulo? Nenhum teste pôde ser executado.",
    },
    "load.crash": {
        "en": "The Python process stopped while importing your file ({code}); does it "
              "call exit() or os._exit() at the top level? No test could run.",
        "pt": "O processo Python parou ao importar seu arquivo ({code}); ele chama exit() ou "
              "os._exit() no nível do módulo? Nenhum teste pôde ser executado.",
    },
    "load.protocol": {
        "en": "Your file wrote to the grader's private channel while being imported. No test could run.",
        "pt": "Seu arquivo escreveu no canal privado do corretor durante a "
              "importação. Nenhum teste pôde ser executado.",
    },
    "load.output": {
        "en": "Your code printed {total} bytes; the first {kept} follow:\n{output}",
        "pt": "Seu código imprimiu {total} bytes; os primeiros {kept} vêm a seguir:\n{output}",
    },
    # ---- known mistakes, one sentence each
    "mistake.softmax-wrong-axis": {
        "en": "the softmax normalizes columns (or the whole matrix) instead of each row: use axis=1 (dim=1 in torch).",
        "pt": "a softmax normaliza as colunas (ou a matriz inteira) em vez de cada linha: use axis=1 (dim=1 no torch).",
    },
    "mistake.softmax-overflow": {
        "en": "exp overflows on large scores, giving NaN or inf: subtract each row's maximum before exp.",
        "pt": "a exp estoura com escores grandes e dá NaN ou inf: subtraia o máximo de cada linha antes da exp.",
    },
    "mistake.missing-scale": {
        "en": "the scores are not divided by √d_k (d_k = the number of columns of Q).",
        "pt": "os escores não foram divididos por √d_k (d_k = número de colunas de Q).",
    },
    "mistake.wrong-scale": {
        "en": "the scores are divided by the wrong amount (d_k, √d_model or similar) instead of √d_k.",
        "pt": "os escores foram divididos pelo valor errado (d_k, √d_model ou parecido) em vez de √d_k.",
    },
    "mistake.scores-transposed": {
        "en": "the scores are K Qᵀ instead of Q Kᵀ: row i must hold query i's scores against every key.",
        "pt": "os escores saíram como K Qᵀ em vez de Q Kᵀ: a linha i deve "
              "ter os escores da consulta i contra cada chave.",
    },
    "mistake.mask-not-applied": {
        "en": "the causal mask is not applied when causal=True, so tokens see the future.",
        "pt": "a máscara causal não é aplicada quando causal=True, então os tokens enxergam o futuro.",
    },
    "mistake.mask-inverted": {
        "en": "the mask hides the past instead of the future: −inf belongs above the diagonal (column > row).",
        "pt": "a máscara esconde o passado em vez do futuro: o −inf vai acima da diagonal (coluna > linha).",
    },
    "mistake.mask-excludes-diagonal": {
        "en": "the mask also hides the diagonal, so a token cannot attend to itself: keep 0 on the diagonal.",
        "pt": "a máscara também esconde a diagonal, então um token não consegue "
              "prestar atenção a si mesmo: mantenha 0 na diagonal.",
    },
    "mistake.mask-not-additive": {
        "en": "the mask holds 0/1 (or multiplies the scores) instead of being added as 0/−inf.",
        "pt": "a máscara usa 0/1 (ou multiplica os escores) em vez de ser somada como 0/−inf.",
    },
    "mistake.mask-after-softmax": {
        "en": "the future is zeroed after the softmax, so rows no longer sum to 1: add the mask before the softmax.",
        "pt": "o futuro é zerado depois da softmax, e as linhas deixam de somar 1: some a máscara antes da softmax.",
    },
    "mistake.concat-wrong-axis": {
        "en": "the heads are stacked as rows; concatenate them side by side (axis=1) into (n, h·d_k).",
        "pt": "as cabeças foram empilhadas como linhas; concatene-as lado a lado (axis=1) em (n, h·d_k).",
    },
    "mistake.missing-output-projection": {
        "en": "the concatenated heads are not multiplied by W_O.",
        "pt": "as cabeças concatenadas não foram multiplicadas por W_O.",
    },
    "mistake.heads-share-weights": {
        "en": "every head uses the first head's weights: head i needs W_Q[i], W_K[i] and W_V[i].",
        "pt": "todas as cabeças usam os pesos da primeira: a cabeça i precisa de W_Q[i], W_K[i] e W_V[i].",
    },
    # ---- the table and the summary
    "table.function": {"en": "test", "pt": "teste"},
    "table.points": {"en": "points", "pt": "pontos"},
    "table.result": {"en": "result", "pt": "resultado"},
    "table.pass": {"en": "pass", "pt": "ok"},
    "table.fail": {"en": "FAIL", "pt": "FALHOU"},
    "table.total": {"en": "Total: {score:g} / {max_score:g}", "pt": "Total: {score:g} / {max_score:g}"},
    "table.mistakes": {"en": "Mistakes found: {ids}", "pt": "Erros identificados: {ids}"},
    "batch.summary": {
        "en": "Graded {count} submissions in {seconds:.1f} s; mean score {mean:.1f} / {max_score:g}.",
        "pt": "{count} submissões corrigidas em {seconds:.1f} s; nota média {mean:.1f} / {max_score:g}.",
    },
    "batch.again": {
        "en": "{count} submission(s) ran out of time beside others and were graded again alone (that grade counts): "
              "{students}",
        "pt": "{count} submissão(ões) estouraram o tempo ao lado de outras e foram corrigidas de novo, sozinhas "
              "(vale essa nota): {students}",
    },
    "batch.mistakes": {"en": "Students per mistake:", "pt": "Estudantes por erro:"},
    "batch.no_mistakes": {"en": "No known mistake was found.", "pt": "Nenhum erro conhecido foi encontrado."},
    "batch.failed": {
        "en": "{student}: the grader could not grade this submission ({error}); it gets 0 and the batch goes on.",
        "pt": "{student}: o corretor não conseguiu corrigir esta submissão ({error}); ela recebe 0 e o lote continua.",
    },
    "gradescope.no_file": {
        "en": "Submit exactly one Python file, student.py (found: {found}).",
        "pt": "Envie exatamente um arquivo Python, student.py (encontrados: {found}).",
    },
    # ---- usage errors (one line each, exit code 2)
    "usage.no_file": {
        "en": "{path}: no such file; give the path of your .py file (e.g. python -m grader student.py)",
        "pt": "{path}: arquivo não encontrado; informe o caminho do seu arquivo .py (ex.: python -m grader student.py)",
    },
    "usage.not_py": {
        "en": "{path} is not a .py file; give the Python file with your functions",
        "pt": "{path} não é um arquivo .py; informe o arquivo Python com as suas funções",
    },
    "usage.batch_needs_seed": {
        "en": "batch grading needs a secret seed: pass --seed-file FILE (or --seed N). The default seed ({seed}) "
              "is public, so answers keyed to its hidden cases can be prepared in advance",
        "pt": "a correção em lote precisa de uma semente secreta: passe --seed-file ARQUIVO (ou --seed N). A semente "
              "padrão ({seed}) é pública, então respostas para os casos ocultos dela podem ser preparadas de antemão",
    },
    "isolation.fallback": {
        "en": "Note: your code ran in the {mode} mode, without Linux namespaces ({problem}); the grades are the same, "
              "the isolation weaker.",
        "pt": "Aviso: seu código rodou no modo {mode}, sem namespaces do Linux ({problem}); as notas são as mesmas, "
              "o isolamento é mais fraco.",
    },
    "usage.empty_dir": {
        "en": "{path} holds no *.py and no */student.py to grade",
        "pt": "{path} não tem nenhum *.py nem */student.py para corrigir",
    },
    "usage.dir_needs_csv": {
        "en": "{path} is a directory: batch grading needs --csv PATH for the gradebook",
        "pt": "{path} é uma pasta: a correção em lote precisa de --csv CAMINHO para a planilha de notas",
    },
    "usage.no_target": {
        "en": "give a student.py to grade, a directory with --csv, or --template",
        "pt": "informe um student.py para corrigir, uma pasta com --csv, ou --template",
    },
    "usage.bad_value": {"en": "{error}", "pt": "{error}"},
    # ---- the starter file
    "template.header": {
        "en": "Question 1: masked multi-head attention.\n\n"
              "Implement each function below; the grader checks each one separately, with the worked\n"
              "example and with hidden cases. Inputs arrive as float64 numpy arrays; you may return numpy\n"
              "arrays, torch tensors or nested lists. Run the grader yourself with:\n\n"
              "    python -m grader student.py",
        "pt": "Questão 1: atenção multi-cabeça mascarada.\n\n"
              "Implemente cada função abaixo; o corretor verifica cada uma separadamente, com o exemplo\n"
              "resolvido e com casos ocultos. As entradas chegam como arrays numpy float64; você pode\n"
              "retornar arrays numpy, tensores torch ou listas aninhadas. Rode o corretor você mesmo com:\n\n"
              "    python -m grader student.py",
    },
    "template.project": {
        "en": "Step 1: project the inputs. X (n, d_model) @ W (d_model, d_k) -> (n, d_k).",
        "pt": "Passo 1: projete as entradas. X (n, d_model) @ W (d_model, d_k) -> (n, d_k).",
    },
    "template.scaled_scores": {
        "en": "Step 2: scaled scores S = Q Kᵀ / √d_k, with d_k the number of columns of Q.\n"
              "Q (n, d_k), K (n, d_k) -> S (n, n).",
        "pt": "Passo 2: escores escalados S = Q Kᵀ / √d_k, com d_k o número de colunas de Q.\n"
              "Q (n, d_k), K (n, d_k) -> S (n, n).",
    },
    "template.causal_mask": {
        "en": "Step 3: the additive causal mask, (n, n): 0 on and below the diagonal, -inf above it.",
        "pt": "Passo 3: a máscara causal aditiva, (n, n): 0 na diagonal e abaixo dela, -inf acima.",
    },
    "template.softmax": {
        "en": "Step 4: softmax of each row of S (n, m) -> (n, m). Must stay finite for scores of about 1e3.",
        "pt": "Passo 4: softmax de cada linha de S (n, m) -> (n, m). Deve "
              "continuar finita com escores da ordem de 1e3.",
    },
    "template.attention_weights": {
        "en": "Steps 2-4: A = softmax(Q Kᵀ / √d_k + M), with M the causal mask when causal is True.\n"
              "Q (n, d_k), K (n, d_k) -> A (n, n).",
        "pt": "Passos 2 a 4: A = softmax(Q Kᵀ / √d_k + M), com M a máscara causal quando causal é True.\n"
              "Q (n, d_k), K (n, d_k) -> A (n, n).",
    },
    "template.attention_head": {
        "en": "Step 5: one head's output A V. Q (n, d_k), K (n, d_k), V (n, d_v) -> (n, d_v).",
        "pt": "Passo 5: a saída de uma cabeça, A V. Q (n, d_k), K (n, d_k), V (n, d_v) -> (n, d_v).",
    },
    "template.multi_head_attention": {
        "en": "Steps 1-7: Concat(head_1 ... head_h) W_O.\n"
              "X (n, d_model); W_Q, W_K, W_V: lists of h matrices (d_model, d_k), one per head;\n"
              "W_O (h*d_k, d_model) -> (n, d_model). Concatenate the heads side by side.",
        "pt": "Passos 1 a 7: Concat(head_1 ... head_h) W_O.\n"
              "X (n, d_model); W_Q, W_K, W_V: listas de h matrizes (d_model, d_k), uma por cabeça;\n"
              "W_O (h*d_k, d_model) -> (n, d_model). Concatene as cabeças lado a lado.",
    },
}


@dataclass(frozen=True)
class Message:
    """A verdict before it is worded: a catalog key and the values its text needs."""

    key: str
    values: dict = field(default_factory=dict)


def render(lang: str, message: Message) -> str:
    """The message's text in ``lang``; values that are Messages are rendered first."""
    values = {k: render(lang, v) if isinstance(v, Message) else v for k, v in message.values.items()}
    return text(lang, message.key, **values)


def default_lang(environ: dict | None = None) -> str:
    """pt when LANG (or LC_ALL / LC_MESSAGES) says Portuguese, else en."""
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var, "")
        if value:
            return "pt" if value.lower().startswith("pt") else "en"
    return "en"


def text(lang: str, key: str, **params) -> str:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {', '.join(LANGS)}, got {lang!r}")
    return CATALOG[key][lang].format(**params)
