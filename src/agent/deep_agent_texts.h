// Every text the deep agent shows its model — tool descriptions, prompts, tool results and
// errors — in one table. Defaults are deepagents' (Python, HITL_SEMANTICS.md §6) and LangChain's
// TodoListMiddleware's; placeholders are {name}, filled by hitl_texts::format_text().
#pragma once

#include <string_view>

namespace tollgate::deep_texts {

// ------------------------------------------------------------------------------ prompts
inline constexpr std::string_view kBaseAgentPrompt =
    R"(You are a deep agent, an AI assistant that helps users accomplish tasks using tools. You respond with text and tool calls. The user can see your responses and tool outputs in real time.

## Core Behavior

- Be concise and direct. Don't over-explain unless asked.
- NEVER add unnecessary preamble ("Sure!", "Great question!", "I'll now...").
- Don't say "I'll now do X" — just do it.
- If the request is underspecified, ask only the minimum followup needed to take the next useful action.
- If asked how to approach something, explain first, then act.

## Doing Tasks

When the user asks you to do something:

1. **Understand first** — read relevant files, check existing patterns. Quick but thorough — gather enough evidence to start, then iterate.
2. **Act** — implement the solution. Work quickly but accurately.
3. **Verify** — check your work against what was asked, not against your own output. Your first attempt is rarely correct — iterate.

Keep working until the task is fully complete. Don't stop partway and explain what you would do — just do it. Only yield back to the user when the task is done or you're genuinely blocked.)";

inline constexpr std::string_view kWriteTodosSystemPrompt =
    R"(## `write_todos`

You have access to the `write_todos` tool to help you manage and plan complex objectives.
Use this tool for complex objectives to ensure that you are tracking each necessary step and giving the user visibility into your progress.
This tool is very helpful for planning complex objectives, and for breaking down these larger complex objectives into smaller steps.

It is critical that you mark todos as completed as soon as you are done with a step. Do not batch up multiple steps before marking them as completed.
For simple objectives that only require a few steps, it is better to just complete the objective directly and NOT use this tool.
Writing todos takes time and tokens, use it when it is helpful for managing complex many-step problems! But not for simple few-step requests.

## Important To-Do List Usage Notes to Remember
- The `write_todos` tool should never be called multiple times in parallel.
- Don't be afraid to revise the To-Do list as you go. New information may reveal new tasks that need to be done, or old tasks that are irrelevant.)";

inline constexpr std::string_view kFilesystemSystemPrompt =
    R"(## Following Conventions

- Read files before editing — understand existing content before making changes
- Mimic existing style, naming conventions, and patterns

## Filesystem Tools `ls`, `read_file`, `write_file`, `edit_file`, `delete`, `glob`, `grep`

You have access to a filesystem which you can interact with using these tools.
All file paths must start with a /. Follow the tool docs for the available tools, and use pagination (offset/limit) when reading large files.

- ls: list files in a directory (requires absolute path)
- read_file: read a file from the filesystem
- write_file: write to a file in the filesystem
- edit_file: edit a file in the filesystem
- delete: delete a file or directory (recursively) from the filesystem
- glob: find files matching a pattern (e.g., "**/*.py")
- grep: search for text within files)";

inline constexpr std::string_view kTaskSystemPrompt =
    R"(## `task` (subagent spawner)

You have access to a `task` tool to launch short-lived subagents that handle isolated tasks. These agents are ephemeral — they live only for the duration of the task and return a single result.

When to use the task tool:

- When a task is complex and multi-step, and can be fully delegated in isolation
- When a task is independent of other tasks and can run in parallel
- When a task requires focused reasoning or heavy token/context usage that would bloat the orchestrator thread
- When you only care about the output of the subagent, and not the intermediate steps

When NOT to use the task tool:

- If you need to see the intermediate reasoning or steps after the subagent has completed (the task tool hides them)
- If the task is trivial (a few tool calls or simple lookup)
- If delegating does not reduce token usage, complexity, or context switching)";

inline constexpr std::string_view kDefaultSubagentPrompt =
    R"(In order to complete the objective that the user asks of you, you have access to a number of standard tools.

The calling agent only sees your final assistant message, not your intermediate work, tool results, or status tracking. Ensure your final
response contains the complete answer.)";

// -------------------------------------------------------------------------- task tool
inline constexpr std::string_view kGeneralPurposeName = "general-purpose";
inline constexpr std::string_view kGeneralPurposeDescription =
    "General-purpose agent for researching complex questions, searching for files and content, "
    "and executing multi-step tasks. When you are searching for a keyword or file and are not "
    "confident that you will find the right match in the first few tries use this agent to "
    "perform the search for you. This agent has access to all tools as the main agent.";
// {available_agents}: one "- <name>: <description>" line per subagent.
inline constexpr std::string_view kTaskToolDescription =
    R"(Launch an ephemeral subagent to handle a complex, multi-step task in an isolated context window.

Available agent types and the tools they have access to:
{available_agents}

Specify subagent_type to select the agent. Usage notes:
- Launch multiple agents concurrently when their tasks are independent, using a single message with multiple tool calls.
- Each invocation is stateless: the agent sees only the prompt you give it and returns a single final report. Put full detail in the prompt and state exactly what it should return.
- The agent's report is not shown to the user; relay a summary yourself.
- Tell the agent whether to create content, analyze, or only research, since it cannot see the user's intent.
- If an agent's description says to use it proactively, do so without waiting to be asked.
- When only general-purpose is available, use it for any complex, context-heavy task; it has the same capabilities as the main agent.)";
inline constexpr std::string_view kTaskDescriptionArg =
    "A detailed description of the task for the subagent to perform autonomously. Include all "
    "necessary context and specify the expected output format.";
inline constexpr std::string_view kTaskSubagentTypeArg =
    "The type of subagent to use. Must be one of the available agent types listed in the tool "
    "description.";
// {type}: the requested name; {allowed}: "`a`, `b`".
inline constexpr std::string_view kUnknownSubagent =
    "We cannot invoke subagent {type} because it does not exist, the only allowed types are "
    "{allowed}";
inline constexpr std::string_view kSubagentWithoutMessages =
    "CompiledSubAgent must return a state containing a 'messages' key. Custom StateGraphs used "
    "with CompiledSubAgent should include 'messages' in their state schema to communicate "
    "results back to the main agent.";

// ------------------------------------------------------------------------ write_todos
inline constexpr std::string_view kWriteTodosToolDescription =
    R"(Use this tool to create and manage a structured task list for your current work session. This helps you track progress, organize complex tasks, and demonstrate thoroughness to the user.

Only use this tool if you think it will be helpful in staying organized. If the user's request is trivial and takes less than 3 steps, it is better to NOT use this tool and just do the task directly.

## Task States and Management

1. **Task States**: Use these states to track progress:
   - pending: Task not yet started
   - in_progress: Currently working on (you can have multiple tasks in_progress at a time if they are not related to each other and can be run in parallel)
   - completed: Task finished successfully

2. **Task Management**:
   - Update task status in real-time as you work
   - Mark tasks complete IMMEDIATELY after finishing (don't batch completions)
   - Remove tasks that are no longer relevant from the list entirely

Remember: If you only need to make a few tool calls to complete a task, and it is clear what you need to do, it is better to just do the task directly and NOT call this tool at all.)";
// {todos}: the list as Python prints it.
inline constexpr std::string_view kTodosUpdated = "Updated todo list to {todos}";

// ----------------------------------------------------------------- filesystem tools
inline constexpr std::string_view kLsDescription =
    R"(Lists all files in a directory.

This is useful for exploring the filesystem and finding the right file to read or edit.
You should almost ALWAYS use this tool before using the read_file or edit_file tools.)";
inline constexpr std::string_view kReadFileDescription =
    R"(Reads a file from the filesystem. Assume any path the user provides is valid; reading a missing file returns an error.

Usage:
- By default, it reads up to 100 lines starting from the beginning of the file. Use `offset`/`limit` to page through large files instead of reading them whole.
- Results are returned with line numbers starting at `offset` + 1 (1 by default), then two spaces, then the source line. Never include these line-number prefixes when editing.
- Lines over 5,000 characters are split with continuation markers (e.g. 5.1, 5.2); `limit` counts source lines, so continuation rows do not consume the budget.
- Speculatively batch multiple `read_file` calls in one response when several files may be useful.
- An empty file returns a system-reminder warning in place of contents.
- Always read a file before editing it.)";
inline constexpr std::string_view kWriteFileDescription =
    R"(Writes content to a file. Creates the file if it does not exist; replaces it entirely if it does.

Usage:
- Use this tool when you intend to create a new file or replace the whole file. You do not need to read the file first.
- Prefer to edit existing files (with the edit_file tool) over creating new ones when possible.
)";
inline constexpr std::string_view kEditFileDescription =
    R"(Performs exact string replacements in files.

Usage:
- You must read the file before editing; this tool errors otherwise.
- Preserve the exact indentation from the read output, and never include line-number prefixes in old_string or new_string.
- Prefer editing an existing file over creating a new one.
- Only use emojis if the user explicitly requests it.)";
inline constexpr std::string_view kDeleteDescription =
    R"(Deletes a file or directory from the filesystem.

Usage:
- Permanently removes the file or directory at the given absolute path.
- Deleting a directory removes it and everything inside it, recursively. Prefer
  deleting a directory in one call over deleting each file individually.
- This cannot be undone, so only delete paths you are sure are no longer needed.
)";
inline constexpr std::string_view kGlobDescription =
    R"(Find files matching a glob pattern, returning absolute paths.

Supports `*` (any characters within a path segment), `**` (any directories), `?` (single character), `[abc]` (one character from a set), and `{a,b}` (alternatives), e.g. `*.py`, `src/**/*.py`, `*.{yml,yaml}`.

A pattern without `/` matches the file name at any depth under the search root (`*.py` matches `src/app/main.py`). A pattern containing `/` matches the search-root-relative path (`src/**/*.py`). A leading `/` anchors to the search root (`/*.py` matches only top-level Python files).

Leading-dot names are only matched when the pattern segment itself starts with `.` (use `.env`, or `.github/**/*.yml`). Because `**` will not descend into dot-directories, the bare form `*.yml` is *broader* than `**/*.yml` and is usually what you want.)";
inline constexpr std::string_view kGrepDescription =
    R"(Search for a LITERAL text pattern across files (NOT regex).

The pattern is matched verbatim: regex metacharacters are ordinary characters, not operators. To match any of several strings, run a separate grep for each; `grep(pattern="foo|bar")` searches for the literal text "foo|bar", and `.*` or `\.` match those characters literally.

Returns matching files or content per `output_mode`.)";

inline constexpr std::string_view kLsPathArg =
    "Absolute path to the directory to list. Must be absolute, not relative.";
inline constexpr std::string_view kReadPathArg =
    "Absolute path to the file to read. Must be absolute, not relative.";
inline constexpr std::string_view kReadOffsetArg =
    "Line number to start reading from (0-indexed). Use for pagination of large files.";
inline constexpr std::string_view kReadLimitArg =
    "Maximum number of lines to read. Use for pagination of large files.";
inline constexpr std::string_view kWritePathArg =
    "Absolute path where the file should be written. Must be absolute, not relative.";
inline constexpr std::string_view kWriteContentArg =
    "The text content to write to the file. This parameter is required.";
inline constexpr std::string_view kEditPathArg =
    "Absolute path to the file to edit. Must be absolute, not relative.";
inline constexpr std::string_view kEditOldArg =
    "The exact text to find and replace. Must be unique in the file unless replace_all is True.";
inline constexpr std::string_view kEditNewArg =
    "The text to replace old_string with. Must be different from old_string.";
inline constexpr std::string_view kEditReplaceAllArg =
    "If True, replace all occurrences of old_string. If False (default), old_string must be "
    "unique.";
inline constexpr std::string_view kDeletePathArg =
    "Absolute path to the file to delete. Must be absolute, not relative.";
inline constexpr std::string_view kGlobPatternArg =
    "Glob pattern to match files (e.g., '*.py', '**/*.py', '/subdir/**/*.md').";
inline constexpr std::string_view kGlobPathArg =
    "Base directory to search from. Defaults to the backend's default root.";
inline constexpr std::string_view kGrepPatternArg =
    "Text pattern to search for (literal string, not regex).";
inline constexpr std::string_view kGrepPathArg =
    "Directory to search in. Defaults to current working directory.";
inline constexpr std::string_view kGrepGlobArg =
    "Glob pattern (NOT regex) limiting which files are searched (e.g. '*.py', '*.ts'). A pattern "
    "without '/' matches the file name at any depth; a pattern containing '/' matches the "
    "search-root-relative path (e.g. 'src/**/*.py').";
inline constexpr std::string_view kGrepOutputModeArg =
    "Shape of the returned text. 'files_with_matches' (default): newline-separated matching file "
    "paths. 'content': matching lines grouped by file under a '<path>:' header, each line "
    "indented and formatted '<line_number>: <line text>'. 'count': one '<path>: <match_count>' "
    "line per file.";

// Results ({path}, {n}, {op}, ...).
inline constexpr std::string_view kError = "Error: {message}";
inline constexpr std::string_view kPermissionDenied = "Error: permission denied for {op} on {path}";
inline constexpr std::string_view kPermissionDeniedDelete =
    "Error: permission denied for write on {path} (matches deny rule(s): {patterns})";
inline constexpr std::string_view kNoFilesFound = "No files found";
inline constexpr std::string_view kNoMatchesFound = "No matches found";
inline constexpr std::string_view kUpdatedFile = "Updated file {path}";
inline constexpr std::string_view kReplaced =
    "Successfully replaced {n} instance(s) of the string in '{path}'";
inline constexpr std::string_view kDeleted = "Deleted {path}";
inline constexpr std::string_view kEmptyFile = "System reminder: File exists but has empty contents";
inline constexpr std::string_view kNoLinesRequested =
    "System reminder: no lines were read because `limit` was {limit}. The file was not inspected "
    "and may have contents; retry with `limit` >= 1 to read it.";
inline constexpr std::string_view kOffsetPastEnd =
    "Line offset {offset} exceeds file length ({total} lines)";
inline constexpr std::string_view kLinesRemaining =
    "\n\n[Read {count} {unit} (lines {start}-{end} of {total} total). {remaining} {remaining_unit} "
    "remaining from offset {next}.]";
inline constexpr std::string_view kNegativeOffset =
    "\n\n[Requested offset {offset} is before the start of the file; read from line 1 instead.]";
inline constexpr std::string_view kStringNotFound = "Error: String not found in file: '{old}'";
inline constexpr std::string_view kStringAmbiguous =
    "Error: String '{old}' appears {n} times in file. Use replace_all=True to replace all "
    "instances, or provide a more specific string with surrounding context.";
inline constexpr std::string_view kFileNotFound = "File '{path}' not found";
inline constexpr std::string_view kTruncated =
    "... [results truncated, try being more specific with your parameters]";

}  // namespace tollgate::deep_texts
