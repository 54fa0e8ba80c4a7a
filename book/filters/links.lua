-- links.lua (site only): a link to another chapter's source, such as
-- [chapter 2](02-ready-deque.md#the-deque), points at its page instead.
function Link(link)
  local path, anchor = link.target:match("^([^:#]+)%.md(#?.*)$")
  if path then
    link.target = path:gsub("^chapters/", "") .. ".html" .. anchor
    return link
  end
end

-- A chapter's page says, under its title, where its program is as one file
-- (book/site.sh gives `archive` to chapters whose code/NN-slug/ exists).
function Pandoc(doc)
  local a = doc.meta.archive
  if not a then return nil end
  local s = pandoc.utils.stringify
  local root = doc.meta.root and s(doc.meta.root) or ""
  for i, block in ipairs(doc.blocks) do
    if block.t == "Header" and block.level == 1 then
      local link = pandoc.Link({pandoc.Str(s(a.name))}, root .. s(a.href), "",
                               pandoc.Attr("", {}, {{"download", ""}}))
      local para = pandoc.Para({pandoc.Str("This chapter's program,"), pandoc.Space(),
                                pandoc.Code(s(a.dir) .. "/"), pandoc.Str(","), pandoc.Space(),
                                pandoc.Str("as one file:"), pandoc.Space(), link})
      table.insert(doc.blocks, i + 1, pandoc.Div({para}, pandoc.Attr("", {"code-archive"})))
      return doc
    end
  end
end
