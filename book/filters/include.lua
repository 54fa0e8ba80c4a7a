--[[ include.lua: put code, diffs and pinned outputs into the book, so the
book never holds a pasted copy (DESIGN section 8). A code block whose content
is empty and which carries one of these attributes is replaced:

  ```{.c include="code/01-select-loop/loop.c"}                  whole file
  ```{.c include="code/01-select-loop/loop.c" region="run_once"} one region
  ```{.diff diff="code/01-select-loop code/02-ready-deque"}       diff -ruN
  ```{.diff diff="code/01-select-loop code/02-ready-deque" files="loop.c"}
  ```{.text output="tests/01-select-loop/echo.out"}              pinned output

A region is the lines between the whole-line markers `/* @region NAME */`
and `/* @end NAME */` (also `// @region NAME` and `# @region NAME`).
Markers of every region are stripped from every listing, and so are an
exercise starter's `/* @exercise begin */` and `/* @exercise end */`. Each listing is
wrapped in a Div.listing whose first block, a Div.caption, names its source.
Paths are relative to $BOOK_ROOT (default: the current directory). Any
missing file or region stops the build with a message and exit status 1. ]]

local ROOT = os.getenv("BOOK_ROOT") or "."

local function fail(fmt, ...)
  io.stderr:write("include.lua: " .. string.format(fmt, ...) .. "\n")
  os.exit(1)
end

local function resolve(path)
  if pandoc.path.is_absolute(path) then return path end
  return pandoc.path.join({ROOT, path})
end

local function read(path, name)
  local f = io.open(resolve(path), "rb")
  local text = f and f:read("a")
  if f then f:close() end
  if not text then
    fail("%s: cannot read file%s", path, name and (" (for region '" .. name .. "')") or "")
  end
  return text
end

local function lines_of(text)
  local lines = {}
  for line in (text:gsub("\n$", "") .. "\n"):gmatch("(.-)\n") do
    lines[#lines + 1] = line
  end
  return lines
end

-- Returns "region"/"end" and the name if LINE is a marker, else nil.  The
-- markers of an exercise's part (`/* @exercise begin */`, `@exercise end`,
-- also as ` * @exercise end` inside a comment; tests/starters.py) are markers
-- too, of kind "exercise": stripped from listings, never a region's bounds.
local function marker(line)
  for _, open in ipairs({"/%*", "//", "#", "%*"}) do
    local kind, name = line:match("^%s*" .. open .. "%s*@(%a+)%s+([%w_%.%-]+)%s*%*?/?%s*$")
    if (kind == "region" or kind == "end") and open ~= "%*" then return kind, name end
    if kind == "exercise" and (name == "begin" or name == "end") then return kind, name end
  end
end

local function strip_markers(lines)
  local kept = {}
  for _, line in ipairs(lines) do
    if not marker(line) then kept[#kept + 1] = line end
  end
  return kept
end

local function dedent(lines)
  local common
  for _, line in ipairs(lines) do
    if line:match("%S") then
      local indent = line:match("^[ \t]*")
      if not common or #indent < #common then common = indent end
    end
  end
  if not common or common == "" then return lines end
  local out = {}
  for i, line in ipairs(lines) do
    out[i] = line:sub(1, #common) == common and line:sub(#common + 1) or line:gsub("^%s+$", "")
  end
  return out
end

local function region(path, name)
  local lines, first, last = lines_of(read(path, name))
  for i, line in ipairs(lines) do
    local kind, n = marker(line)
    if n == name and kind == "region" and not first then first = i
    elseif n == name and kind == "end" and first and not last then last = i end
  end
  if not first then fail("%s: region '%s' not found", path, name) end
  if not last then fail("%s: region '%s' has no end marker (/* @end %s */)", path, name, name) end
  return dedent(strip_markers(table.move(lines, first + 1, last - 1, 1, {})))
end

local function sh(script, ...)
  local ok, out = pcall(pandoc.pipe, "sh", {"-c", script, "sh", ...}, "")
  if not ok then fail("command failed: %s\n%s", script, tostring(type(out) == "table" and out.output or out)) end
  return out
end

-- diff -ruN between two stage folders, markers stripped on both sides, with
-- repository-relative labels: the folders are copied under a temporary
-- directory at their own relative paths and diffed from there.
local function diff(dirs, files)
  local a, b = dirs:match("^%s*(%S+)%s+(%S+)%s*$")
  if not a then fail("diff=\"%s\": expected two folders", dirs) end
  for _, d in ipairs({a, b}) do
    if sh('test -d "$1" && echo yes || echo no', resolve(d)) ~= "yes\n" then
      fail("%s: folder not found (diff=\"%s\")", d, dirs)
    end
  end
  for _, rel in ipairs(files or {}) do
    local fa, fb = io.open(resolve(a .. "/" .. rel)), io.open(resolve(b .. "/" .. rel))
    if fa then fa:close() end
    if fb then fb:close() end
    if not (fa or fb) then fail("%s: not found in %s nor in %s", rel, a, b) end
  end
  return pandoc.system.with_temporary_directory("book-diff", function(tmp)
    for _, d in ipairs({a, b}) do
      local list = files and table.concat(files, "\n") or
        sh('cd "$1" && find . -path ./exercises -prune -o -type f -print | sed "s|^\\./||"', resolve(d))
      for rel in list:gmatch("[^\n]+") do
        local src = resolve(d .. "/" .. rel)
        local f = io.open(src, "rb")
        if f then  -- a file missing on one side is shown as added/removed (-N)
          local text = f:read("a"); f:close()
          local dest = tmp .. "/" .. d .. "/" .. rel
          sh('mkdir -p "$(dirname "$1")"', dest)
          local body = table.concat(strip_markers(lines_of(text)), "\n")
          local out = io.open(dest, "wb"); out:write(body, text == "" and "" or "\n"); out:close()
        end
      end
      sh('mkdir -p "$1"', tmp .. "/" .. d)
    end
    -- diff exits 1 when the folders differ; only 2 is trouble. Timestamps go.
    local out = sh('cd "$1" && { diff -ruN --exclude=exercises "$2" "$3"; test $? -le 1; }', tmp, a, b)
    return (out:gsub("\n(%-%-%- [^\t\n]+)\t[^\n]*", "\n%1"):gsub("\n(%+%+%+ [^\t\n]+)\t[^\n]*", "\n%1")
      :gsub("^(%-%-%- [^\t\n]+)\t[^\n]*", "%1")
      :gsub("diff %-ruN '%-%-exclude=exercises' ", "diff -ruN "))
  end)
end

local function output(path)
  local text = read(path)
  local cmdfile = path:gsub("%.[^./]*$", "") .. ".cmd"
  local f = io.open(resolve(cmdfile), "rb")
  if f then
    local cmd = (f:read("l") or ""); f:close()
    text = "$ " .. cmd .. "\n" .. text
  end
  return text
end

local function listing(block, text, caption)
  local attr = block.attr:clone()
  for _, k in ipairs({"include", "region", "diff", "files", "output"}) do
    attr.attributes[k] = nil
  end
  local code = pandoc.CodeBlock(text:gsub("\n+$", ""), attr)
  return pandoc.Div({pandoc.Div({pandoc.Plain(caption)}, pandoc.Attr("", {"caption"})), code},
                    pandoc.Attr("", {"listing"}))
end

function CodeBlock(block)
  local at = block.attributes
  local include, name, dirs, out = at.include, at.region, at.diff, at.output
  if not (include or dirs or out) then return nil end
  if block.text:match("%S") then
    fail("%s: an include block must be empty", include or dirs or out)
  end
  if include and name then
    return listing(block, table.concat(region(include, name), "\n"),
                   {pandoc.Code(include), pandoc.Str(", region "), pandoc.Code(name)})
  elseif include then
    return listing(block, table.concat(strip_markers(lines_of(read(include))), "\n"),
                   {pandoc.Code(include)})
  elseif dirs then
    local files
    if at.files then
      files = {}
      for f in at.files:gmatch("%S+") do files[#files + 1] = f end
    end
    local a, b = dirs:match("(%S+)%s+(%S+)")
    local caption = {pandoc.Str("diff "), pandoc.Code(a), pandoc.Str(" → "), pandoc.Code(b)}
    if files then
      caption[#caption + 1] = pandoc.Str(", " .. table.concat(files, ", "))
    end
    local text = diff(dirs, files)
    return listing(block, text ~= "" and text or "(no differences)", caption)
  else
    return listing(block, output(out), {pandoc.Str("output, pinned in "), pandoc.Code(out)})
  end
end
