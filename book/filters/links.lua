-- links.lua (site only): a link to another chapter's source, such as
-- [chapter 2](02-ready-deque.md#the-deque), points at its page instead.
function Link(link)
  local path, anchor = link.target:match("^([^:#]+)%.md(#?.*)$")
  if path then
    link.target = path:gsub("^chapters/", "") .. ".html" .. anchor
    return link
  end
end
