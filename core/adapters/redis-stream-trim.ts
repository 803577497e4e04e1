/**
 * Trimming a Redis stream of what every consumer group is done with.
 *
 * KEYS[1] stream; ARGV[1] keep ms. Removes (XTRIM MINID, exact) the entries
 * below the lowest of, over every group of the stream: its oldest pending
 * entry if it has any, else the entry after its last-delivered-id (everything
 * up to that one is acknowledged). Entries younger than `keep ms` (by their
 * id, on the Redis clock) stay too, so a group created moments after a
 * publish still sees the record, as it would without trimming. A stream
 * without groups is left alone: its records wait for their first group.
 * Returns the number of entries removed.
 *
 * Atomic, so no group can be created, read or moved back between the look and
 * the trim. Ids are compared as (ms, seq); a seq too long for a Lua number is
 * taken as 0, which only trims less.
 */
export const TRIM_ACKNOWLEDGED_LUA = `
local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  if ms == nil then return nil end
  if #seq > 15 then return { tonumber(ms), 0, false } end
  return { tonumber(ms), tonumber(seq), true }
end
local function below(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end

local groups = redis.pcall('XINFO', 'GROUPS', KEYS[1])
if type(groups) ~= 'table' or groups.err or #groups == 0 then return 0 end
local t = redis.call('TIME')
local bound = { tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(ARGV[1]), 0 }
for _, g in ipairs(groups) do
  local name, last, pending
  for i = 1, #g, 2 do
    if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'last-delivered-id' then last = g[i + 1] elseif g[i] == 'pending' then pending = g[i + 1] end
  end
  local keep
  if pending ~= nil and pending > 0 then
    local summary = redis.call('XPENDING', KEYS[1], name)
    keep = parse(summary[2])
  else
    keep = parse(last or '0-0')
    if keep ~= nil and keep[3] then keep[2] = keep[2] + 1 end
  end
  if keep == nil then return 0 end
  if below(keep, bound) then bound = keep end
end
if bound[1] <= 0 then return 0 end
return redis.call('XTRIM', KEYS[1], 'MINID', string.format('%d-%d', bound[1], bound[2]))
`;
