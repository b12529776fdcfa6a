  # The body of verificar.R's local({...}), after the data grader/r_selfcheck.py writes before it: `textos` (the
  # catalog's texts in the student's language), `decimal` (its decimal mark), `limite` (seconds per call, the
  # grader's), `mascara` (the finite fill at or below which a mask entry counts as -Inf) and `casos` (each public
  # case: test, function, label, arguments, expected value and tolerance). Base R only. It judges as
  # grader/functions/checks.py and grader/tolerance.py do: dimensions first, then every entry within the case's tolerance
  # (or the same infinity); a test passes when all of its cases do.

  # A text of the catalog with its {placeholders} filled in, left to right, each value taken as it is.
  dizer <- function(chave, ...) {
    texto <- textos[[chave]]
    valores <- list(...)
    for (nome in names(valores)) {
      marca <- paste0("{", nome, "}")
      valor <- as.character(valores[[nome]])
      inicio <- 1L
      repeat {
        resto <- substring(texto, inicio)
        onde <- regexpr(marca, resto, fixed = TRUE)
        if (onde < 0L) break
        antes <- substr(texto, 1L, inicio + onde - 2L)
        texto <- paste0(antes, valor, substring(resto, onde + nchar(marca)))
        inicio <- nchar(antes) + nchar(valor) + 1L
      }
    }
    texto
  }
  numero <- function(x) {
    if (is.nan(x)) return("NaN")
    if (is.infinite(x)) return(if (x > 0) "Inf" else "-Inf")
    format(signif(x, 4), digits = 4, decimal.mark = decimal)
  }
  dimensoes <- function(x) {
    d <- dim(x)
    if (is.null(d)) return(dizer("vector", length = length(x)))
    paste(d, collapse = " x ")
  }

  # The student's code, as the grader runs it: expression by expression, in an environment of its own; an
  # expression that fails (a missing package, a data file) is skipped and said, the rest still runs.
  carregar <- function(arquivo) {
    linhas <- readLines(arquivo, warn = FALSE, encoding = "UTF-8")
    if (!all(validUTF8(linhas))) linhas <- iconv(linhas, "CP1252", "UTF-8")  # as the grader reads a Windows file
    if (length(linhas)) linhas[[1L]] <- sub("^\ufeff", "", linhas[[1L]])  # a byte-order mark
    if (grepl("\\.(Rmd|qmd)$", arquivo, ignore.case = TRUE)) {  # the {r} chunks that run, on their own lines
      dentro <- FALSE
      roda <- FALSE
      for (i in seq_along(linhas)) {
        linha <- linhas[[i]]
        if (!dentro && grepl("^\\s*```+\\s*\\{", linha)) {
          dentro <- TRUE
          roda <- grepl("^\\s*```+\\s*\\{\\s*[rR][\\s,}]", linha, perl = TRUE) &&
            !grepl("eval\\s*=\\s*(FALSE|F)\\b", linha, perl = TRUE)
          linhas[[i]] <- ""
        } else if (dentro && grepl("^\\s*```+\\s*$", linha)) {
          dentro <- FALSE
          linhas[[i]] <- ""
        } else if (dentro && grepl("^\\s*#\\|\\s*eval\\s*:\\s*(false|no)\\s*$", linha, ignore.case = TRUE)) {
          roda <- FALSE
          linhas[[i]] <- ""
        } else if (!dentro || !roda) {
          linhas[[i]] <- ""
        }
      }
    }
    ambiente <- new.env(parent = globalenv())
    expressoes <- tryCatch(parse(text = linhas, keep.source = TRUE), error = function(e) e)
    if (inherits(expressoes, "error")) {
      message(dizer("parse", file = basename(arquivo), error = conditionMessage(expressoes)))
      return(NULL)
    }
    onde <- attr(expressoes, "srcref")
    for (i in seq_along(expressoes)) {
      erro <- tryCatch({
        setTimeLimit(elapsed = 10 * limite, transient = TRUE)
        eval(expressoes[[i]], envir = ambiente)
        NULL
      }, error = function(e) conditionMessage(e))
      setTimeLimit(elapsed = Inf)
      if (!is.null(erro)) message(dizer("skipped", line = onde[[i]][[1L]], error = erro))
    }
    ambiente
  }

  # One case: NULL when it passes, else what differs.
  julgar <- function(funcao, caso) {
    argumentos <- caso$args
    if (!is.null(caso$causal)) argumentos$causal <- caso$causal
    valor <- tryCatch({
      setTimeLimit(elapsed = limite, transient = TRUE)
      list(ok = do.call(funcao, argumentos))
    }, error = function(e) list(erro = conditionMessage(e)))
    setTimeLimit(elapsed = Inf)
    if (!is.null(valor$erro)) return(dizer("error", error = valor$erro))
    obtido <- valor$ok
    if (is.data.frame(obtido) && all(vapply(obtido, function(x) is.numeric(x) || is.logical(x), logical(1)))) {
      obtido <- as.matrix(obtido)
    }
    if (is.null(obtido)) return(dizer("null"))
    if (!(is.numeric(obtido) || is.logical(obtido)) || is.list(obtido)) {
      return(dizer("not_matrix", kind = paste(class(obtido), collapse = "/")))
    }
    esperado <- caso$esperado
    if (!identical(as.integer(dim(obtido)), as.integer(dim(esperado)))) {
      return(dizer("shape", expected = dimensoes(esperado), got = dimensoes(obtido)))
    }
    obtido <- matrix(as.double(obtido), nrow = nrow(esperado))
    if (caso$f == "causal_mask") obtido[is.finite(obtido) & obtido <= mascara] <- -Inf
    finitos <- is.finite(obtido) & is.finite(esperado)
    perto <- finitos & abs(ifelse(finitos, obtido - esperado, 0)) <= caso$tol
    infinito <- is.infinite(obtido) & is.infinite(esperado) & sign(obtido) == sign(esperado)
    certo <- perto | infinito
    if (all(certo)) return(NULL)
    onde <- which(!certo, arr.ind = TRUE)[1L, ]
    dizer("entries", wrong = sum(!certo), total = length(certo), entry = paste0("(", onde[[1L]], ",", onde[[2L]], ")"),
          got = numero(obtido[onde[[1L]], onde[[2L]]]), want = numero(esperado[onde[[1L]], onde[[2L]]]))
  }

  function(arquivo) {
    if (!file.exists(arquivo)) stop(dizer("no_file", file = arquivo), call. = FALSE)
    ambiente <- carregar(arquivo)
    testes <- unique(vapply(casos, function(caso) caso$teste, ""))
    resultado <- setNames(logical(length(testes)), testes)
    for (teste in testes) {
      deste <- Filter(function(caso) caso$teste == teste, casos)
      nome <- deste[[1L]]$f
      funcao <- if (is.null(ambiente)) NULL else get0(nome, envir = ambiente, inherits = FALSE)
      if (!is.function(funcao)) {
        cat(dizer("missing", test = teste, name = nome), "\n", sep = "")
        next
      }
      falhas <- 0L
      primeira <- NULL
      for (caso in deste) {
        difere <- julgar(funcao, caso)
        if (!is.null(difere)) {
          falhas <- falhas + 1L
          if (is.null(primeira)) primeira <- paste0(caso$rotulo, ": ", difere)
        }
      }
      resultado[[teste]] <- falhas == 0L
      palavra <- if (length(deste) == 1L) textos$case_one else textos$case_many
      if (falhas == 0L) {
        cat(dizer("passed", test = teste, count = length(deste), cases = palavra), "\n", sep = "")
      } else {
        cat(dizer("failed", test = teste, failed = falhas, count = length(deste), cases = palavra, first = primeira),
            "\n", sep = "")
      }
    }
    cat(dizer("summary", passed = sum(resultado), count = length(resultado)), "\n", sep = "")
    invisible(resultado)
  }
