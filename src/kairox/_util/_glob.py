import functools
import re


@functools.lru_cache(maxsize=2048)
def glob_to_regex(glob: str, *, braces: bool = False, dir_itself: bool = False) -> str:
    """A path glob as a regular expression over ``/``-separated paths (no anchors).

    ``*`` and ``?`` stay within one folder, ``**`` crosses folders (``**/`` also matches no folder at all),
    ``[abc]`` / ``[!abc]`` are character classes. ``braces`` adds ``{a,b}`` alternatives (LSP file
    patterns); ``dir_itself`` lets a trailing ``/**`` also match the folder itself (permission rules).
    """
    out: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        if glob.startswith("/**", index) and index + 3 == len(glob):
            out.append("(?:/.*)?" if dir_itself else "/.*")
            index += 3
        elif glob.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[" and (end := glob.find("]", index + 2)) != -1:
            body = glob[index + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\").replace("[", "\\[") + "]")
            index = end + 1
        elif braces and char == "{" and (end := glob.find("}", index)) != -1:
            out.append("(?:" + "|".join(re.escape(p) for p in glob[index + 1 : end].split(",")) + ")")
            index = end + 1
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)
