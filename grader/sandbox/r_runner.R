# The R side of the sandbox's child: load a student's R code and answer the grader's calls, nothing more.
#
# Started by grader/sandbox/inside/serving.py (_become_r) inside the submission's namespaces, after its limits are set, as
#   R --vanilla --no-echo -f r_runner.R --args CONFIG
# with the request pipe on fd 0 and the answer pipe on fd 3; fd 1 and fd 2 are the student's output.
# CONFIG is the first frame's header (serving.py wrote it as JSON, with the token in hex, and the
# student's cells and helper files beside it); this script deletes it once read.
#
# The wire is grader/sandbox/inside/wire.py's, described there once: 16-byte token | u32 header length |
# u64 blob length | JSON header | blob, little-endian. Requests carry arrays of any rank as raw float64 in
# C order (row-major); answers carry the result so, with its shape and R's type name, or an error. Nothing is
# judged here. The constants below are wire.py's (tests/grader/sandbox/inside/test_wire.py compares them).
#
# The runner lives in an environment of its own (parent: base) whose bindings are locked; the student's
# code runs in the global environment, as `Rscript student.R` would run it, so `rm(list = ls())` or a
# redefined `c` there cannot reach the runner's state. system(), system2(), quit() and install.packages()
# are replaced by functions that raise a clear error (the sandbox, not this, is what contains a process).

local({
  runner <- environment()
  parent.env(runner) <- baseenv()
  TOKEN_BYTES <- 16L  # wire.py: TOKEN_BYTES
  FRAME_HEAD_BYTES <- 28L  # wire.py: FRAME_HEAD.size (the token, a u32, a u64)
  FLOAT64_BYTES <- 8L  # wire.py: FLOAT64_BYTES

  # ------------------------------------------------------------------------------- the configuration
  config_path <- commandArgs(trailingOnly = TRUE)[[1L]]
  config <- jsonlite::fromJSON(config_path, simplifyVector = FALSE)
  unlink(config_path)
  token <- as.raw(strtoi(substring(config$token, seq(1L, 31L, 2L), seq(2L, 32L, 2L)), 16L))
  functions <- unlist(config$functions)
  max_entries <- as.numeric(config$max_entries)
  to_json <- jsonlite::toJSON
  from_json <- jsonlite::fromJSON

  requests <- file("stdin", open = "rb")
  # fd 3 by a shell redirection: /dev/fd needs a /proc, which the sandbox may hide
  answers <- pipe("exec cat >&3", open = "wb")

  # ------------------------------------------------------------------------------------------- frames
  read_exact <- function(n) {
    if (n == 0) return(raw(0))
    got <- readBin(requests, "raw", n)
    while (length(got) < n) {
      more <- readBin(requests, "raw", n - length(got))
      if (length(more) == 0L) return(NULL)
      got <- c(got, more)
    }
    got
  }

  u32 <- function(bytes) {
    value <- readBin(bytes, "integer", size = 4L, endian = "little")
    if (value < 0) value + 2^32 else value
  }

  read_frame <- function() {
    head <- read_exact(FRAME_HEAD_BYTES)
    if (is.null(head) || length(head) < FRAME_HEAD_BYTES) return(NULL)
    header_len <- u32(head[TOKEN_BYTES + 1:4])
    blob_len <- u32(head[TOKEN_BYTES + 5:8]) + u32(head[TOKEN_BYTES + 9:12]) * 2^32
    header <- read_exact(header_len)
    blob <- read_exact(blob_len)
    if (is.null(header) || is.null(blob)) return(NULL)
    list(header = from_json(rawToChar(header), simplifyVector = FALSE), blob = blob)
  }

  send <- function(header, blob = raw(0)) {
    json <- if (is.character(header)) header else to_json(header, auto_unbox = TRUE, null = "null", digits = NA)
    text <- charToRaw(enc2utf8(as.character(json)))
    n <- length(blob)
    frame <- c(token, writeBin(length(text), raw(), size = 4L, endian = "little"),
               writeBin(as.integer(n %% 2^32 - (n %% 2^32 >= 2^31) * 2^32), raw(), size = 4L, endian = "little"),
               writeBin(as.integer(n %/% 2^32), raw(), size = 4L, endian = "little"), text, blob)
    flush(stdout())
    writeBin(frame, answers)
    flush(answers)
  }

  # ------------------------------------------------------------------------------ arguments and answers
  decode <- function(arg, blob) {
    kind <- arg$kind
    if (identical(kind, "matrix")) {
      shape <- as.integer(unlist(arg$shape))
      count <- prod(shape)
      start <- arg$offset
      values <- if (count > 0) readBin(blob[start + seq_len(count * FLOAT64_BYTES)], "double", n = count,
                                       size = FLOAT64_BYTES, endian = "little") else numeric(0)
      if (length(shape) == 2L) return(matrix(values, nrow = shape[[1L]], ncol = shape[[2L]], byrow = TRUE))
      if (length(shape) < 2L) return(values)  # rank 0: one number; rank 1: a vector
      return(aperm(array(values, dim = rev(shape))))  # C order into R's column-major: dim(result) is shape
    }
    if (identical(kind, "list")) return(lapply(arg$items, decode, blob = blob))
    arg$value  # an integer (n) or a logical (causal)
  }

  # What R calls the value's type, as the grader reports it ("double", "integer", "data.frame", "list", ...).
  type_name <- function(value) {
    if (is.data.frame(value)) return("data.frame")
    if (is.null(value)) return("NULL")
    substr(typeof(value), 1L, 40L)
  }

  # The answer as (shape, row-major doubles), or a character string saying what it is instead.
  as_answer <- function(value) {
    if (is.data.frame(value)) {
      numeric <- vapply(value, function(column) is.numeric(column) || is.logical(column), logical(1))
      if (!all(numeric)) return("data.frame with columns that are not numbers")
      value <- as.matrix(value)
    }
    if (inherits(value, "Matrix")) value <- as.matrix(value)  # the Matrix package's classes
    if (!(is.numeric(value) || is.logical(value)) || is.object(value) && !is.matrix(value) && !is.array(value)) {
      return(if (is.object(value)) paste(class(value), collapse = "/") else typeof(value))  # what came instead
    }
    dims <- dim(value)
    if (is.null(dims)) dims <- length(value)
    if (length(dims) > 1L) value <- aperm(value, rev(seq_along(dims)))  # R is column-major; the wire row-major
    list(shape = as.list(as.integer(dims)), values = as.double(as.vector(value)))
  }

  # ----------------------------------------------------------------------------------------- stand-ins
  # Attribution (grader/functions/attribution.py): during a call whose request names `helpers`, each of those
  # functions of the student's is, in the global environment where their code finds it, a stand-in that sends
  # its arguments to the grader (a helper request, wire.py) and returns the reference's value the grader
  # computed. Nothing of the reference is here; a refusal is an R error in the student's call.
  encode_call <- function(values) {
    chunks <- list()
    offset <- 0
    enc <- function(value) {
      if (is.list(value) && !is.data.frame(value)) return(list(kind = "list", items = lapply(unname(value), enc)))
      if (is.null(dim(value)) && length(value) == 1L && is.logical(value) && !is.na(value)) {
        return(list(kind = "scalar", value = value))  # causal = TRUE
      }
      if (is.null(dim(value)) && length(value) == 1L && is.numeric(value) && is.finite(value) &&
          value == round(value) && abs(value) < .Machine$integer.max) {
        return(list(kind = "scalar", value = as.integer(value)))  # n, whether nrow(S) or 3
      }
      answer <- as_answer(value)
      if (is.character(answer)) stop(paste0("a ", answer, " cannot be passed to the grader's stand-in"), call. = FALSE)
      bytes <- writeBin(answer$values, raw(), size = FLOAT64_BYTES, endian = "little")
      chunks[[length(chunks) + 1L]] <<- bytes
      offset <<- offset + length(bytes)
      list(kind = "matrix", shape = answer$shape, offset = as.integer(offset - length(bytes)))  # JSON: an int
    }
    named <- if (is.null(names(values))) rep(FALSE, length(values)) else nzchar(names(values))
    kwargs <- lapply(values[named], enc)
    if (!length(kwargs)) kwargs <- structure(list(), names = character(0))  # {} on the wire, not []
    list(args = lapply(unname(values[!named]), enc), kwargs = kwargs, blob = unlist(chunks, use.names = FALSE))
  }

  stand_in <- function(call_id, name) {
    force(call_id)
    force(name)
    function(...) {
      call <- encode_call(list(...))
      send(list(id = call_id, helper = name, args = call$args, kwargs = call$kwargs),
           if (is.null(call$blob)) raw(0) else call$blob)
      frame <- read_frame()
      if (is.null(frame)) stop("the grader closed the pipe", call. = FALSE)
      if (!isTRUE(frame$header$ok)) stop(paste0(name, ": ", frame$header$error), call. = FALSE)
      decode(list(kind = "matrix", shape = frame$header$shape, offset = 0), frame$blob)
    }
  }

  # Run `run` with the stand-ins of `helpers` (graded functions' names only) in place, the student's own put
  # back afterwards (or removed, where the student had none); a name the student's code locked keeps its own.
  with_stand_ins <- function(helpers, call_id, run) {
    helpers <- intersect(unlist(helpers), functions)
    own <- list()
    absent <- character(0)
    on.exit(for (name in names(own)) try(assign(name, own[[name]], envir = globalenv()), silent = TRUE))
    on.exit(try(rm(list = absent, envir = globalenv()), silent = TRUE), add = TRUE)
    for (name in helpers) {
      had <- exists(name, envir = globalenv(), inherits = FALSE)
      previous <- if (had) get(name, envir = globalenv(), inherits = FALSE)
      placed <- tryCatch({
        assign(name, stand_in(call_id, name), envir = globalenv())
        TRUE
      }, error = function(e) FALSE)
      if (placed && had) own[name] <- list(previous)  # a NULL kept too
      if (placed && !had) absent <- c(absent, name)
    }
    run()
  }

  # ------------------------------------------------------------------------------------ where and what
  student_line <- function(calls) {
    line <- NULL
    for (call in calls) {
      ref <- attr(call, "srcref")
      file <- if (!is.null(ref)) attr(ref, "srcfile") else NULL
      if (is.environment(file) && exists(".grader_offset", envir = file, inherits = FALSE)) {
        line <- ref[[1L]] + get(".grader_offset", envir = file)
      }
    }
    line
  }

  error_fields <- function(condition, line) {
    message <- gsub("[[:space:]]+", " ", conditionMessage(condition))
    call <- conditionCall(condition)
    where <- if (!is.null(call)) paste0("Error in ", paste(deparse(call, nlines = 1L), collapse = ""), ": ")
             else "Error: "
    type <- if (grepl("not implemented|n\u00e3o implementad", message)) "NotImplementedError"
            else paste0("R.", class(condition)[[1L]])
    list(error = substr(paste0(where, message), 1L, 600L), error_type = type,
         line = if (is.null(line)) NULL else as.integer(line))
  }

  # Evaluate `expr` in the student's environment; list(ok, value) or list(ok = FALSE, error fields).
  guarded <- function(run, seconds = Inf) {
    line <- NULL
    on.exit(setTimeLimit(elapsed = Inf, transient = FALSE))
    setTimeLimit(elapsed = seconds, transient = TRUE)
    tryCatch(
      list(ok = TRUE, value = withCallingHandlers(run(), error = function(e) line <<- student_line(sys.calls()))),
      error = function(e) {
        setTimeLimit(elapsed = Inf, transient = FALSE)
        timed_out <- grepl("reached (elapsed|CPU) time limit", conditionMessage(e))
        c(list(ok = FALSE, timeout = timed_out), error_fields(e, line))
      },
      interrupt = function(e) list(ok = FALSE, timeout = TRUE, error = "interrupted", error_type = "R.interrupt"))
  }

  # --------------------------------------------------------------------------------------- what is off
  # Calls that would reach outside the student's functions raise a clear error instead; the sandbox still
  # holds whatever gets past them (.Internal, a package's C code).
  refuse <- function(what) {
    force(what)
    function(...) stop(paste0(what, "() is not available where grading runs"), call. = FALSE)
  }
  replace_in_base <- function(name, value) {
    for (where in list(baseenv(), .BaseNamespaceEnv)) {
      if (exists(name, envir = where, inherits = FALSE)) {
        unlockBinding(name, where)
        assign(name, value, envir = where)
        lockBinding(name, where)
      }
    }
  }
  for (name in c("system", "system2", "quit", "q")) replace_in_base(name, refuse(name))
  utils_ns <- asNamespace("utils")
  for (name in c("install.packages", "View", "remove.packages", "update.packages")) {
    unlockBinding(name, utils_ns)
    assign(name, refuse(name), envir = utils_ns)
    lockBinding(name, utils_ns)
    if ("package:utils" %in% search()) {
      attached <- as.environment("package:utils")
      unlockBinding(name, attached)
      assign(name, refuse(name), envir = attached)
      lockBinding(name, attached)
    }
  }

  # --------------------------------------------------------------------------------------- the loading
  # R's complaint without the name it parsed the cell under ("student.R:9:1: "): what is wrong, then R's context
  # lines as lines, numbered as the student sees them (the document's lines; a notebook cell's own).
  parse_message <- function(text, cell) {
    lines <- strsplit(sub("^[^:\n]*:[0-9]+:[0-9]+: ", "", text), "\n", fixed = TRUE)[[1L]]
    shift <- if (is.null(cell$cell)) cell$line - 1L else 0L
    numbered <- regmatches(lines, regexec("^([0-9]+): (.*)$", lines))
    for (i in seq_along(lines)) {
      if (length(numbered[[i]]) == 3L) lines[[i]] <- paste0(as.integer(numbered[[i]][[2L]]) + shift, ": ",
                                                            numbered[[i]][[3L]])
    }
    paste(lines, collapse = "\n")
  }

  parse_cell <- function(cell) {
    lines <- strsplit(cell$source, "\n", fixed = TRUE)[[1L]]
    file <- srcfilecopy("student.R", lines)
    assign(".grader_offset", cell$line - 1L, envir = file)
    exprs <- tryCatch(parse(text = lines, keep.source = TRUE, srcfile = file), error = function(e) e)
    if (inherits(exprs, "error")) {
      text <- conditionMessage(exprs)
      at <- regmatches(text, regexec("^[^:]*:([0-9]+):", text))[[1L]]
      line <- if (length(at) == 2L) as.integer(at[[2L]]) + cell$line - 1L else cell$line
      return(list(error = list(error = substr(parse_message(text, cell), 1L, 600L), error_type = "R.parse",
                               line = line)))
    }
    list(exprs = exprs, refs = attr(exprs, "srcref"), offset = cell$line - 1L)
  }

  load_tolerantly <- function(cells, seconds, budget) {
    whole_file <- length(cells) == 1L
    skipped <- list()
    start <- proc.time()[["elapsed"]]
    for (cell in cells) {
      parsed <- parse_cell(cell)
      if (!is.null(parsed$error)) {
        if (whole_file) return(list(failed = parsed$error, skipped = skipped))
        skipped[[length(skipped) + 1L]] <- c(list(kind = "error"), parsed$error)
        next
      }
      for (i in seq_along(parsed$exprs)) {
        expr <- parsed$exprs[[i]]
        line <- parsed$refs[[i]][[1L]] + parsed$offset
        left <- max(budget - (proc.time()[["elapsed"]] - start), 0.2)
        limit <- min(seconds, left)
        outcome <- guarded(function() eval(expr, envir = globalenv()), limit)
        if (!outcome$ok && isTRUE(outcome$timeout)) {
          skipped[[length(skipped) + 1L]] <- list(kind = "timeout", line = as.integer(line), seconds = limit)
        } else if (!outcome$ok) {
          skipped[[length(skipped) + 1L]] <- list(kind = "error", error = outcome$error,
                                                  error_type = outcome$error_type, line = as.integer(line))
        }
      }
    }
    list(failed = NULL, skipped = skipped[seq_len(min(length(skipped), 50L))])
  }

  # ---------------------------------------------------------------------------------------- the session
  serve <- function() {
    for (helper in config$helpers) writeLines(helper[[2L]], helper[[1L]], useBytes = TRUE)
    loaded <- load_tolerantly(config$cells, as.numeric(config$statement_seconds), as.numeric(config$load_seconds))
    if (!is.null(loaded$failed)) {
      send(c(list(ready = FALSE), loaded$failed))
      return(invisible())
    }
    defined <- Filter(function(f) is.function(get0(f, envir = globalenv(), inherits = FALSE)), functions)
    send(list(ready = TRUE, functions = as.list(defined), skipped = loaded$skipped))
    repeat {
      frame <- read_frame()
      if (is.null(frame)) return(invisible())
      request <- frame$header
      args <- lapply(request$args, decode, blob = frame$blob)
      kwargs <- lapply(request$kwargs, decode, blob = frame$blob)
      name <- request$`function`
      student <- if (is.character(name) && name %in% functions) get0(name, envir = globalenv(), inherits = FALSE)
      called <- with_stand_ins(request$helpers, request$id,
                               function() guarded(function() do.call(student, c(args, kwargs), envir = globalenv())))
      if (!called$ok) {
        send(c(list(id = request$id, ok = FALSE, stage = "call", dtype = ""),
               called[c("error", "error_type", "line")]))
        next
      }
      dtype <- type_name(called$value)
      answer <- as_answer(called$value)
      if (is.character(answer)) {
        send(list(id = request$id, ok = FALSE, stage = "convert", dtype = dtype, error = answer,
                  error_type = "R.not_numeric"))
      } else if (length(answer$values) > max_entries) {
        send(list(id = request$id, ok = FALSE, too_big = length(answer$values)))
      } else {
        # the header of every answer, written here rather than by jsonlite (a third of a call's time): the
        # type name is one of R's typeof() words or "data.frame", nothing to escape
        header <- sprintf('{"id": %d, "ok": true, "shape": [%s], "dtype": "%s"}', as.integer(request$id),
                          paste(unlist(answer$shape), collapse = ", "), dtype)
        send(header, writeBin(answer$values, raw(), size = FLOAT64_BYTES, endian = "little"))
      }
    }
  }
  lockEnvironment(runner, bindings = TRUE)
  serve()
})
