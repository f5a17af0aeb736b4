"""Names vulture (the dead-code hook) cannot see used: each is read by a framework or by the
program being stood in for, never by a call in this repository. One line each, with why."""

_ = object  # vulture counts a name as used when it is read; `_.name` reads it

# argparse
_.formatter_class  # read by argparse when it formats a parser's --help

# pytest (collected by name, or called as hooks)
_.pytest_plugins  # tests/conftest.py: pytest loads the named plugins
_.collect_ignore  # tests/conftest.py: pytest skips collecting these files
_.pytestmark  # a test module's marks, read by pytest
_.pytest_configure  # runtime/pytest_standins.py: a pytest hook
_.pytest_report_header  # a pytest hook
_.pytest_collection_modifyitems  # a pytest hook

# torch (nn.Module.__call__ runs forward; hooks get their arguments by position)
_.forward  # torch.nn.Module.__call__ calls it
_.grad_outputs  # testing/audit_planted.py: the signature autograd calls a node hook with

# CPU stand-ins: attributes megatron and torch read on the modules they replace
_._get_cuda_rng_state  # megatron's tensor_parallel.random reads it
_._set_cuda_rng_state  # megatron's tensor_parallel.random reads it
_.manual_seed_all  # torch.cuda API megatron calls
_.get_rng_state  # torch.cuda API megatron calls
_.set_rng_state  # torch.cuda API megatron calls
_.device_count  # torch.cuda API megatron's test utils call
_.range_push  # torch.cuda.nvtx API megatron calls
_.range_pop  # torch.cuda.nvtx API megatron calls
_.disable  # torch._dynamo.config.disable, read by torch.compile

# testing/audit_planted.py: attributes planted to be found holding tensors, never read back
_.LAST  # the audit must find (and then not find) what it holds
_.callback  # a closure the audit must find holding a tensor
_.last_batch  # a wrapper's attribute the audit must find holding a tensor

# http.server (the loopback GitHub and the capture server)
_.log_message  # BaseHTTPRequestHandler calls it for each request
_.do_DELETE  # BaseHTTPRequestHandler dispatches a DELETE to it
_.do_PATCH  # BaseHTTPRequestHandler dispatches a PATCH to it
_.do_POST  # BaseHTTPRequestHandler dispatches a POST to it
_.do_PUT  # BaseHTTPRequestHandler dispatches a PUT to it
_.daemon_threads  # ThreadingMixIn reads it
_.close_connection  # BaseHTTPRequestHandler reads it after each request
_.protocol_version  # BaseHTTPRequestHandler reads it (testing/hostile_github: HTTP/1.1 answers)
_.allow_reuse_address  # socketserver.TCPServer reads it when it binds

# ghapi's transport (httpx2): read by the transport when it sends
_.retries  # github.py sets it to 0: retries are decided there, per verb

# TypedDict keys (resubmit/model.py, resubmit/gate.py): read by string key
_.required_status_checks  # a rule's parameters and the judged rules, read by key
_.required_signatures  # the judged rules, read by key
_.required_linear_history  # the judged rules, read by key
_.after_push  # the judged rules' DCO result after the push, written by key
