# An unknown name. No host functions are declared in this file, so under
# cella a *call* of an unknown name would be a host call; a plain reference
# is a NameError.
x = 1
total = x + undefined_variable
# expect-error: NameError: name 'undefined_variable' is not defined
