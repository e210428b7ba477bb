# cella-only
# functions: add
# open is no builtin (no files in code mode): a NameError naming it. With
# host functions declared, an unknown name is not a host call.
print("start")
open("/etc/passwd").read()
# expect-error: NameError: name 'open' is not defined
