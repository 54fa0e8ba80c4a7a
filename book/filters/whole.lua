--[[ whole.lua: the whole book as one document (the EPUB and the PDF).
pandoc reads the pages (book/index.md, chapters/NN-*.md, chapters/aN-*.md,
chapters/answers/NN.md, in that order, each with --file-scope) into one
document, in which each page starts at its level-1 heading. Headings that
repeat in every chapter ("Run it", "Exercises") would share one id, so each
id is prefixed with its page's name (ch03-run-it), a page's own heading gets
the bare name (ch03), and every link to a page's source is rewritten:

  a2-errata.md          -> #app2
  a1-glossary.md#steps  -> #app1-steps
  #steps                -> #app1-steps   (inside chapters/a1-glossary.md)

pandoc's EPUB writer then points each #id at the file that holds it. A link
to a .md file that is not a page of the book stops the build. The preface's
title becomes "Preface" (the title page carries the book's title). ]]

local function fail(fmt, ...)
  io.stderr:write("whole.lua: " .. string.format(fmt, ...) .. "\n")
  os.exit(1)
end

-- chapters/03-timer-heap.md -> ch03; chapters/a2-errata.md -> app2;
-- chapters/answers/03.md -> ans03; book/index.md -> front
local function page_name(path)
  if path:match("book/index%.md$") then return "front" end
  local n = path:match("answers/(%d+)[^/]*%.md$")
  if n then return "ans" .. n end
  n = path:match("chapters/a(%d+)-[^/]*%.md$")
  if n then return "app" .. n end
  n = path:match("chapters/(%d+)-[^/]*%.md$")
  if n then return "ch" .. n end
  fail("%s: not a page of the book", path)
end

-- Links are written relative to the page's folder as the site lays it out:
-- chapters/ holds the chapters (and, on the site, book/index.md's page).
local function folder(path)
  if path:match("book/index%.md$") then return "chapters" end
  return path:match("^(.*)/[^/]*$") or "."
end

local function normalize(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." and #parts > 0 and parts[#parts] ~= ".." then
      table.remove(parts)
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return table.concat(parts, "/")
end

function Pandoc(doc)
  local files = PANDOC_STATE.input_files
  local names, by_path = {}, {}
  for i, f in ipairs(files) do
    names[i] = page_name(f)
    by_path[normalize(f)] = names[i]
  end

  local pages, current = {}, nil
  for _, block in ipairs(doc.blocks) do
    if block.t == "Header" and block.level == 1 then
      current = {block}
      pages[#pages + 1] = current
    elseif current then
      current[#current + 1] = block
    else
      fail("text before the first page's title")
    end
  end
  if #pages ~= #files then
    fail("%d pages read but %d level-1 headings found (one per page)", #files, #pages)
  end

  local out = {}
  for i, page in ipairs(pages) do
    local name, dir = names[i], folder(normalize(files[i]))
    local function prefixed(id) return name .. "-" .. id end
    local function with_id(el)
      if el.identifier and el.identifier ~= "" then
        el.identifier = prefixed(el.identifier)
        return el
      end
    end
    local filter = {
      Header = with_id, Div = with_id, Span = with_id, CodeBlock = with_id,
      Code = with_id, Image = with_id, Table = with_id,
      Link = function(link)
        with_id(link)
        local t = link.target
        if t:match("^#") then
          link.target = "#" .. prefixed(t:sub(2))
          return link
        end
        if t:match("^%a[%w+.-]*:") then return link end
        local path, anchor = t:match("^([^#]+%.md)#?(.*)$")
        if not path then return link end
        local target = by_path[normalize(dir .. "/" .. path)]
        if not target then
          fail("%s: link to %s, which is not a page of the book", files[i], t)
        end
        link.target = "#" .. (anchor ~= "" and (target .. "-" .. anchor) or target)
        return link
      end,
    }
    for j, block in ipairs(page) do
      block = pandoc.walk_block(pandoc.Div({block}), filter).content[1]
      if j == 1 then
        block.identifier = name
        if name == "front" then block.content = {pandoc.Str("Preface")} end
      end
      out[#out + 1] = block
    end
  end
  doc.blocks = out
  return doc
end
