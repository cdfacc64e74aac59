-- wrk script: POST a ~1 KB OpenAI chat completion body.
-- taskset -c 1 wrk -t1 -c32 -d5s -s chat_1k.lua http://127.0.0.1:PORT/v1/chat/completions
local filler = string.rep("x", 857)
wrk.method = "POST"
wrk.path = "/v1/chat/completions"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model": "gpt-4o", "messages": [{"role": "system", "content": "You are a helpful assistant."}, '
  .. '{"role": "user", "content": "' .. filler .. '"}], "temperature": 0.2, "max_tokens": 64}'
