# cella-only
# functions: add
# open is refused (no files in code mode): NotImplementedError naming it
# when called. With a host function declared, no unknown name is one.
print("start")
open("/etc/passwd").read()
# expect-error: NotImplementedError: 'open' is not supported in code mode
