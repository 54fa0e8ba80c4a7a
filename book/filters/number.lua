--[[ number.lua: numbers sections and figures, in the site, the EPUB and the
PDF alike. A chapter's title carries its own number ("# 3. The timer heap",
"# Appendix B. Errata ..."); its sections become 3.1, 3.2, 3.2.1 ... and its
figures Figure 3.1, Figure 3.2 (appendices: B.1, Figure B.1). Pages whose
title has no number (the preface, the answers) keep unnumbered headings.
Works on one page or on the whole book in one document: each level-1
heading starts a chapter. The number goes into a Span.secno before the
heading's text, so the contents lists show it too; ids are unchanged. ]]

local function chapter_number(header)
  local text = pandoc.utils.stringify(header.content)
  return text:match("^Appendix (%u)%.") or text:match("^(%d+)%.")
end

local function number_blocks(blocks)
  local chapter, counts, figures = nil, {0, 0, 0, 0, 0}, 0
  local out = {}
  for _, block in ipairs(blocks) do
    if block.t == "Header" and block.level == 1 then
      chapter, counts, figures = chapter_number(block), {0, 0, 0, 0, 0}, 0
    elseif block.t == "Header" and chapter and block.level <= 4
        and not block.classes:includes("unnumbered") then
      counts[block.level] = counts[block.level] + 1
      for l = block.level + 1, #counts do counts[l] = 0 end
      local parts = {chapter}
      for l = 2, block.level do parts[#parts + 1] = tostring(counts[l]) end
      local number = table.concat(parts, ".")
      block.content:insert(1, pandoc.Space())
      block.content:insert(1, pandoc.Span({pandoc.Str(number)}, pandoc.Attr("", {"secno"})))
    elseif block.t == "Para" and #block.content == 1 and block.content[1].t == "Image"
        and block.content[1].title:match("^fig:") and chapter then
      figures = figures + 1
      local image = block.content[1]
      local label = "Figure " .. chapter .. "." .. figures
      image.caption:insert(1, pandoc.Space())
      image.caption:insert(1, pandoc.Span({pandoc.Str(label .. ":")}, pandoc.Attr("", {"figno"})))
      if image.identifier == "" then
        image.identifier = "figure-" .. chapter:lower() .. "-" .. figures
      end
    end
    out[#out + 1] = block
  end
  return out
end

function Pandoc(doc)
  doc.blocks = number_blocks(doc.blocks)
  return doc
end
