/* The agent executable (src/agent/main.c, built static), embedded so that
 * cella stays one file. box/runtime.c copies it into a sealed memfd. */
    .section .rodata.cella_agent_image,"a"
    .balign 64
    .globl cella_agent_image
    .type cella_agent_image, @object
cella_agent_image:
    .incbin CELLA_AGENT_IMAGE_PATH
    .globl cella_agent_image_end
cella_agent_image_end:
    .section .note.GNU-stack,"",@progbits
