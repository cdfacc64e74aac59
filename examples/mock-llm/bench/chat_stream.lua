-- wrk script: POST a small streaming OpenAI chat completion (7 SSE frames).
-- taskset -c 1 wrk -t1 -c32 -d5s -s chat_stream.lua http://127.0.0.1:PORT/v1/chat/completions
wrk.method = "POST"
wrk.path = "/v1/chat/completions"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model": "gpt-4o", "stream": true, "stream_options": {"include_usage": true}, '
  .. '"messages": [{"role": "user", "content": "hi"}]}'
